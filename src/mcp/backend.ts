/** What an MCP session needs from the process that hosts it (a local runtime, or the HTTP thread's remote one). */
import type { LayerObject } from '../layer/types.js';
import type { PeerClient } from '../peers/board.js';
import type { CallContext, CallOutcome } from '../platform/call.js';
import type { ToolTable } from './projection.js';

export interface McpBackend {
  readonly tools: ToolTable;
  /**
   * Validates and runs a capability; a refusal is an outcome, never a throw. `call` carries the
   * caller's progress sink and cancellation to wherever the handler runs.
   */
  invoke(capabilityId: string, args: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome>;
  objects(): readonly LayerObject[];
  object(uri: string): LayerObject | undefined;
  /** Adds the peer; answers its id and its `initialize` instructions (one trip where that costs one). */
  join(client: PeerClient, preferredPeerId: string | null, clientPids: readonly number[]): Promise<{ peerId: string; instructions: string }>;
  leave(peerId: string): void;
  instructions(peerId: string): Promise<string>;
  /**
   * The delegation limit (the policy's `max_depth`): a client at this depth or deeper is offered no
   * delegating tool. Absent: no limit applies here.
   */
  delegationLimit?(): number;
  /**
   * The depth the harness stamped on the running agent whose process chain `clientPids` is (the
   * client is an agent this server spawned), or null. Absent: no harness here.
   */
  agentDepth?(clientPids: readonly number[]): Promise<number | null>;
}
