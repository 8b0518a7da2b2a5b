/**
 * The state one serving process owns — registry, layer view, peer board — and the one way to run
 * a capability against it. The stdio session calls it directly; the HTTP thread reaches it only
 * for what reads the peer board (everything else runs in the pool over the snapshot).
 */
import { CapabilityError, errorMessage } from '../platform/errors.js';
import type { LayerView } from '../layer/view.js';
import type { BoardAccess } from '../board/schemas.js';
import type { Coordination } from '../coordination/coordination.js';
import { sessionOf } from '../platform/proc.js';
import type { PeerBoard, PeerClient } from '../peers/board.js';
import type { ContextByReads } from '../capabilities/context.js';
import { execute, parseInput, type Registry } from '../registry/registry.js';
import type { HarnessAccess } from '../harness/table.js';
import type { TaskAccess } from '../tasks/board.js';
import type { CallContext, CallOutcome } from '../platform/call.js';

export interface RuntimeOptions {
  registry: Registry;
  layer: LayerView;
  /** The layer's generation (1, the startup build, unless given). */
  generation?: number;
  /** The peer board, where this thread owns it; pool threads have none. */
  board: PeerBoard | null;
  /** Claims and messages over the board, beside it. */
  coordination?: Coordination | null;
  /** The board shared with the repository's other checkouts, beside the peer board; null while alone. */
  sharedBoard?: BoardAccess | null;
  /** The session table, in the harness thread only. */
  harness?: HarnessAccess | null;
  /** The task board over the session table, in the harness thread only. */
  tasks?: TaskAccess | null;
  /** Where harness calls go from a thread without the table (the shared server's main thread). */
  remoteHarness?: ((capabilityId: string, input: unknown, caller: string | null, call: CallContext) => Promise<CallOutcome>) | null;
  /** The shared server's base URL once bound; null while served alone. */
  url: () => string | null;
  /** `MAJORDOMUS_FAULT`: this capability throws an unexpected error (tests of the `internal` path; see `execute`). */
  faultCapability?: string | null;
}

export class Runtime {
  readonly registry: Registry;
  #layer: LayerView;
  #generation: number;
  readonly board: PeerBoard | null;
  readonly coordination: Coordination | null;
  readonly #sharedBoard: BoardAccess | null;
  readonly #harness: HarnessAccess | null;
  readonly #tasks: TaskAccess | null;
  readonly #remoteHarness: RuntimeOptions['remoteHarness'];
  readonly #url: () => string | null;
  readonly #faultCapability: string | null;

  constructor(options: RuntimeOptions) {
    this.#faultCapability = options.faultCapability ?? null;
    this.registry = options.registry;
    this.#layer = options.layer;
    this.#generation = options.generation ?? 1;
    this.board = options.board;
    this.coordination = options.coordination ?? null;
    this.#sharedBoard = options.sharedBoard ?? null;
    this.#harness = options.harness ?? null;
    this.#tasks = options.tasks ?? null;
    this.#remoteHarness = options.remoteHarness ?? null;
    this.#url = options.url;
  }

  /** The serving generation's layer: read it at call time, never keep it (a reload replaces it). */
  get layer(): LayerView {
    return this.#layer;
  }

  /** 1 for the startup build, +1 per reload swapped in. */
  get generation(): number {
    return this.#generation;
  }

  /** Serves a new generation of the layer from now on (calls under way finish on the old one). */
  useGeneration(generation: number, layer: LayerView): void {
    this.#generation = generation;
    this.#layer = layer;
  }

  /**
   * Validates the input and runs the capability with the context its `reads` asks for; `call` is
   * handed to the handler as it is (progress, cancellation).
   */
  async invoke(capabilityId: string, args: unknown, caller: string | null, call: CallContext = {}): Promise<unknown> {
    const descriptor = this.registry.byId(capabilityId);
    if (!descriptor) throw new CapabilityError('not_found', `no capability ${capabilityId}`);
    const input = parseInput(descriptor, args);
    if (caller !== null) this.board?.touch(caller);
    return execute(descriptor, input, this.#context(descriptor.reads, caller), { fault: this.#faultCapability, call });
  }

  /** Adds a peer; `clientPids` is the chain of its agent's processes, nearest first (may be empty). */
  join(client: PeerClient, transport: 'stdio' | 'http', preferredPeerId?: string, clientPids: readonly number[] = []): string {
    const agent = clientPids[0];
    const where = agent === undefined ? undefined : { chain: [...clientPids], session: sessionOf(agent) };
    return this.peers().join(client, transport, preferredPeerId, where);
  }

  /** The peer leaves the board, and its claims end with it. */
  leave(peerId: string): void {
    if (this.peers().leave(peerId)) this.coordination?.peerLeft(peerId);
  }

  /** Runs a capability and answers with an outcome that survives a thread boundary. */
  async outcome(capabilityId: string, args: unknown, caller: string | null, call: CallContext = {}): Promise<CallOutcome> {
    if (this.#harness === null && this.#remoteHarness && this.registry.byId(capabilityId)?.reads === 'harness') {
      if (caller !== null) this.board?.touch(caller);
      return this.#remoteHarness(capabilityId, args, caller, call);
    }
    try {
      return { ok: true, json: JSON.stringify(await this.invoke(capabilityId, args, caller, call)) ?? 'null' };
    } catch (error) {
      if (error instanceof CapabilityError) {
        return { ok: false, code: error.code, message: error.message, ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }) };
      }
      return { ok: false, code: 'internal', message: errorMessage(error) };
    }
  }

  /** The shared server's base URL once bound; null while served alone. */
  get url(): string | null {
    return this.#url();
  }

  #context(reads: keyof ContextByReads, caller: string | null): ContextByReads[keyof ContextByReads] {
    switch (reads) {
      case 'registry':
        return { catalog: this.registry.catalog };
      case 'layer':
        return { catalog: this.registry.catalog, layer: this.#layer, generation: this.#generation };
      case 'peers':
        if (!this.coordination) throw new CapabilityError('internal', 'coordination lives beside the peer board, in the main thread');
        return { peers: this.peers(), coordination: this.coordination, board: this.#sharedBoard, caller };
      case 'harness':
        if (this.#harness && this.#tasks) return { harness: this.#harness, tasks: this.#tasks, caller };
        throw new CapabilityError('refused', 'the harness runs in the checkout\'s shared server; this client is served alone (--standalone, or the lease is unavailable), so it cannot start or read agent sessions');
    }
  }

  /** The peer board; refused where this thread has none (a pool thread). */
  peers(): PeerBoard {
    if (!this.board) throw new CapabilityError('internal', 'the peer board lives in the main thread, not here');
    return this.board;
  }
}
