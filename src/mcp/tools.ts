/**
 * `tools/list` and `tools/call` of a session. A call carries the caller's cancellation and, when
 * the client set `_meta.progressToken` and the transport gave the request a notification sink,
 * its progress as `notifications/progress` on that sink. A capability's refusal is a tool result
 * with `isError` (the model reads it), invalid arguments are `InvalidParams`.
 */
import type { CallContext, CallOutcome } from '../platform/call.js';
import { RPC } from '../platform/jsonrpc.js';
import type { McpBackend } from './backend.js';
import { ToolResult } from './frame.js';
import { progressTokenOf, requiredString, RequestError, type Params, type RequestScope } from './request.js';

/** Who calls: the session's peer, and the delegation depth its bridge reported (absent: the server's). */
export interface ToolCaller {
  peerId: string | null;
  spawnDepth: number | undefined;
}

export function listTools(backend: McpBackend): unknown {
  return { tools: backend.tools.tools };
}

export async function callTool(backend: McpBackend, params: Params, scope: RequestScope, caller: ToolCaller): Promise<unknown> {
  const name = requiredString(params, 'name', 'tools/call');
  const capabilityId = backend.tools.capabilityOf(name);
  if (capabilityId === undefined) throw new RequestError(RPC.invalidParams, `Unknown tool: ${name}`);
  const args = params.arguments === undefined ? {} : params.arguments;
  const { signal, notify } = scope;
  const progressToken = progressTokenOf(params);
  let ended = false;
  const call: CallContext = caller.spawnDepth === undefined ? { signal } : { signal, depth: caller.spawnDepth };
  if (progressToken !== undefined && notify !== undefined) {
    let progress = 0;
    // MCP: progress only while the request is active, and increasing with every notification.
    call.onProgress = (message) => {
      if (ended || signal.aborted) return;
      progress += 1;
      notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, message } });
    };
  }
  let outcome: CallOutcome;
  try {
    outcome = await backend.invoke(capabilityId, args, caller.peerId, call);
  } finally {
    ended = true;
  }
  if (outcome.ok) return new ToolResult(outcome.json);
  if (outcome.code === 'invalid_input') throw new RequestError(RPC.invalidParams, `Invalid arguments for tool ${name}: ${outcome.message}`);
  return { content: [{ type: 'text', text: `${outcome.code}: ${outcome.message}` }], isError: true };
}
