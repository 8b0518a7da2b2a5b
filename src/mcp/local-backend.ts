/**
 * MCP over a runtime in this thread: the owner's own stdio client, `--standalone`, and a client
 * served alone. Every call runs here, directly; nothing crosses a thread.
 */
import type { Runtime } from '../runtime/runtime.js';
import { onLogRecord } from '../platform/log.js';
import { ancestry } from '../platform/proc.js';
import { joinWithInstructions, runtimeInstructions } from './instructions.js';
import { toolTable } from './projection.js';
import { McpSession, type McpBackend } from './session.js';

export function localBackend(runtime: Runtime, transport: 'stdio' | 'http'): McpBackend {
  const tools = toolTable(runtime.registry.catalog);
  return {
    tools,
    invoke: (capabilityId, args, caller, call) => runtime.outcome(capabilityId, args, caller, call),
    objects: () => runtime.layer.index.objects,
    object: (uri) => runtime.layer.get(uri),
    join: async (client, preferred, pids) => joinWithInstructions(runtime, client, transport, preferred ?? undefined, pids),
    leave: (peerId) => runtime.leave(peerId),
    instructions: async (peerId) => runtimeInstructions(runtime, peerId),
  };
}

/**
 * A stdio session of this thread's runtime; `preferredPeerId` keeps a client's id after a
 * takeover. Its client is the agent that started this process, and hears this process's log.
 */
export function localSession(runtime: Runtime, preferredPeerId: string | null): McpSession {
  const clientPids = ancestry(process.ppid);
  return new McpSession(localBackend(runtime, 'stdio'), { ...(preferredPeerId ? { preferredPeerId } : {}), clientPids, logs: onLogRecord });
}
