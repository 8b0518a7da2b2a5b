/**
 * MCP over a runtime in this thread: the owner's own stdio client, `--standalone`, and a client
 * served alone. Every call runs here, directly; nothing crosses a thread.
 */
import type { Runtime } from '../runtime/runtime.js';
import { onLogRecord } from '../platform/log.js';
import { harnessPolicy } from '../harness/profiles.js';
import { ancestry } from '../platform/proc.js';
import { settings } from '../platform/settings.js';
import { joinWithInstructions, runtimeInstructions } from './instructions.js';
import { toolTable } from './projection.js';
import { McpSession, type McpBackend } from './session.js';

/** `agentDepth`: where the harness says which of its agents a client is (the owner's harness thread). */
export function localBackend(runtime: Runtime, transport: 'stdio' | 'http', agentDepth?: McpBackend['agentDepth']): McpBackend {
  const tools = toolTable(runtime.registry.catalog);
  return {
    ...(agentDepth === undefined ? {} : { agentDepth }),
    tools,
    invoke: (capabilityId, args, caller, call) => runtime.outcome(capabilityId, args, caller, call),
    objects: () => runtime.layer.index.objects,
    object: (uri) => runtime.layer.get(uri),
    join: async (client, preferred, pids) => joinWithInstructions(runtime, client, transport, preferred ?? undefined, pids),
    leave: (peerId) => runtime.leave(peerId),
    instructions: async (peerId) => runtimeInstructions(runtime, peerId),
    delegationLimit: () => harnessPolicy(runtime.layer).limits.maxDepth,
  };
}

/**
 * A stdio session of this thread's runtime; `preferredPeerId` keeps a client's id after a
 * takeover. Its client is the agent that started this process, and hears this process's log.
 */
export function localSession(runtime: Runtime, preferredPeerId: string | null, agentDepth?: McpBackend['agentDepth']): McpSession {
  const clientPids = ancestry(process.ppid);
  // The client started this process: its depth is this process's own (a client nobody spawned is at 0).
  const spawnDepth = settings().spawnDepth ?? 0;
  const backend = localBackend(runtime, 'stdio', agentDepth);
  return new McpSession(backend, { ...(preferredPeerId ? { preferredPeerId } : {}), clientPids, spawnDepth, logs: onLogRecord });
}
