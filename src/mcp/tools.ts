/**
 * `tools/list` and `tools/call` of a session. A call carries the caller's cancellation and, when
 * the client set `_meta.progressToken` and the transport gave the request a notification sink,
 * its progress as `notifications/progress` on that sink. A capability's refusal is a tool result
 * with `isError` (the model reads it), invalid arguments are `InvalidParams`.
 *
 * What a session is offered was decided at its initialize: a client at the delegation limit gets
 * no delegating tool (listed or called: dispatch is by name, so the call is refused too), and a
 * client whose protocol has tasks sees which tools may run as one.
 */
import type { CallContext, CallOutcome } from '../platform/call.js';
import { RPC } from '../platform/jsonrpc.js';
import type { McpBackend } from './backend.js';
import { ToolResult } from './frame.js';
import { toolsFor } from './projection.js';
import { progressTokenOf, requiredString, RequestError, type Params, type RequestScope } from './request.js';

/** Who calls: the session's peer, and the delegation depth its bridge reported (absent: the server's). */
export interface ToolCaller {
  peerId: string | null;
  spawnDepth: number | undefined;
}

/** What one session is offered (see `toolsFor`), and why a delegating tool is not. */
export interface ToolOffer {
  delegates: boolean;
  tasks: boolean;
  /** Why the delegating tools are withheld (the depth and the limit), when they are. */
  withheld?: string;
}

export function listTools(backend: McpBackend, offer: ToolOffer): unknown {
  return { tools: toolsFor(backend.tools, offer) };
}

/** The tool a call names, as this session is offered it: its name and capability. */
export function offeredTool(backend: McpBackend, params: Params, offer: ToolOffer): { name: string; capabilityId: string } {
  const name = requiredString(params, 'name', 'tools/call');
  const capabilityId = backend.tools.capabilityOf(name);
  if (capabilityId === undefined) throw new RequestError(RPC.invalidParams, `Unknown tool: ${name}`);
  if (!offer.delegates && backend.tools.delegating?.has(name)) {
    throw new RequestError(RPC.invalidParams, `Unknown tool: ${name} (this session is at the ${offer.withheld ?? 'delegation limit'}: it is offered no tool that starts or drives agents)`);
  }
  return { name, capabilityId };
}

/** The call context of one tool call: the caller's signal and depth (a task call adds its own). */
export function callContextOf(scope: RequestScope, caller: ToolCaller): CallContext {
  return caller.spawnDepth === undefined ? { signal: scope.signal } : { signal: scope.signal, depth: caller.spawnDepth };
}

/** A refusal of a call as a JSON-RPC error, where no tool result can carry it (a task that never started). */
export function refusalError(name: string, outcome: Extract<CallOutcome, { ok: false }>): RequestError {
  if (outcome.code === 'invalid_input') return new RequestError(RPC.invalidParams, `Invalid arguments for tool ${name}: ${outcome.message}`);
  return new RequestError(outcome.code === 'internal' || outcome.code === 'busy' ? RPC.internalError : RPC.invalidParams, `${outcome.code}: ${outcome.message}`);
}

export async function callTool(backend: McpBackend, params: Params, scope: RequestScope, caller: ToolCaller, offer: ToolOffer): Promise<unknown> {
  const { name, capabilityId } = offeredTool(backend, params, offer);
  const args = params.arguments === undefined ? {} : params.arguments;
  const { signal, notify } = scope;
  const progressToken = progressTokenOf(params);
  let ended = false;
  const call = callContextOf(scope, caller);
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
  if (outcome.code === 'invalid_input') throw refusalError(name, outcome);
  return { content: [{ type: 'text', text: `${outcome.code}: ${outcome.message}` }], isError: true };
}
