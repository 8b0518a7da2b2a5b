/**
 * The MCP backend of the `/mcp` sessions in the HTTP thread: tools and resources from the
 * snapshot, capability calls through the dispatcher, and everything about peers (join, leave,
 * liveness, the instructions that list them) from the main thread, which owns the board.
 */
import { harnessPolicy } from '../harness/profiles.js';
import type { LayerView } from '../layer/view.js';
import type { McpBackend } from '../mcp/session.js';
import type { ToolTable } from '../mcp/projection.js';
import type { RpcClient } from '../platform/rpc.js';
import type { CallContext, CallOutcome } from '../platform/call.js';
import type { HarnessControl } from '../threads/harness.js';
import type { HostControl } from '../threads/http.js';
import type { CallDispatcher } from './dispatcher.js';

/** A peer's liveness is sent to the main thread at most this often. */
const TOUCH_EVERY_MS = 1_000;

export interface RemoteBackendOptions {
  tools: ToolTable;
  layer: LayerView;
  dispatcher: CallDispatcher;
  host: RpcClient<HostControl>;
  /** Told the board's size after every join and leave (the thread's copy, for `GET /`). */
  onPeerCount(count: number): void;
  /** The harness thread, which knows the agents it spawned (null: this server has none). */
  harness: RpcClient<HarnessControl> | null;
}

export class RemoteMcpBackend implements McpBackend {
  readonly tools: ToolTable;
  readonly #options: RemoteBackendOptions;
  #layer: LayerView;
  readonly #lastTouch = new Map<string, number>();

  constructor(options: RemoteBackendOptions) {
    this.tools = options.tools;
    this.#options = options;
    this.#layer = options.layer;
  }

  /** Serves a new generation's layer from now on. */
  useLayer(layer: LayerView): void {
    this.#layer = layer;
  }

  invoke(capabilityId: string, args: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome> {
    return this.#options.dispatcher.invoke(capabilityId, args, caller, call);
  }

  objects(): ReturnType<McpBackend['objects']> {
    return this.#layer.index.objects;
  }

  object(uri: string): ReturnType<McpBackend['object']> {
    return this.#layer.get(uri);
  }

  async join(...args: Parameters<McpBackend['join']>): ReturnType<McpBackend['join']> {
    const joined = await this.#options.host.join(...args);
    this.#options.onPeerCount(joined.peers);
    return { peerId: joined.peerId, instructions: joined.instructions };
  }

  leave(peerId: string): void {
    this.#lastTouch.delete(peerId);
    this.#options.host.leave(peerId).then(
      (peers) => this.#options.onPeerCount(peers),
      () => undefined, // the main thread has gone: the server is ending
    );
  }

  instructions(peerId: string): Promise<string> {
    return this.#options.host.instructions(peerId);
  }

  /** The depth of the agent this server spawned whose process chain a client is, or null. */
  async agentDepth(clientPids: readonly number[]): Promise<number | null> {
    if (this.#options.harness === null || clientPids.length === 0) return null;
    return this.#options.harness.agentDepth([...clientPids]).catch(() => null);
  }

  /** The serving layer's `max_depth`: a client at it is offered no delegating tool. */
  delegationLimit(): number {
    return harnessPolicy(this.#layer).limits.maxDepth;
  }

  /** The peer made a request: it is alive (throttled, the board keeps seconds). */
  touch(peerId: string): void {
    const now = Date.now();
    if ((this.#lastTouch.get(peerId) ?? 0) > now - TOUCH_EVERY_MS) return;
    this.#lastTouch.set(peerId, now);
    this.#options.host.touch(peerId).catch(() => undefined);
  }
}
