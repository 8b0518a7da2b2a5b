/**
 * Where an HTTP caller's capability call runs, decided by what the capability reads: the peer
 * board lives in the main thread (reached over `HostControl`); a pure query over the snapshot is
 * answered from the answer cache or computed once in the pool; everything else goes to the pool.
 * Calls that arrive in one turn of the HTTP thread's event loop reach the pool as one batch.
 */
import { errorMessage } from '../platform/errors.js';
import type { CapabilityCatalog } from '../registry/catalog.js';
import type { RpcClient } from '../platform/rpc.js';
import { harnessCall } from '../threads/harness-call.js';
import { PROGRESS_STREAM, type CallContext, type CallOutcome } from '../platform/call.js';
import { type HarnessControl } from '../threads/harness.js';
import { type HostControl } from '../threads/http.js';
import { type PoolCall, type PoolWorkerData } from '../threads/pool.js';
import { AnswerCache } from './answer-cache.js';
import { Batcher } from './batcher.js';
import { PoolChannels } from './pool-channels.js';

export interface DispatcherOptions {
  catalog: CapabilityCatalog;
  host: RpcClient<HostControl>;
  /** The harness thread, where the server has the session table. */
  harness: RpcClient<HarnessControl> | null;
  poolTaskFile: string;
  poolThreads: number;
  pool: PoolWorkerData;
  /** The generation of `pool.snapshot`. */
  generation: number;
  answerCache: boolean;
}

/** At most this many calls wait for the pool; past it a call is answered `busy` at once. */
const MAX_PENDING_CALLS = 4096;

export class CallDispatcher {
  readonly #catalog: CapabilityCatalog;
  readonly #host: RpcClient<HostControl>;
  readonly #harness: RpcClient<HarnessControl> | null;
  readonly #pool: PoolChannels;
  readonly #batches: Batcher<PoolCall, CallOutcome>;
  #answers: AnswerCache | null;
  readonly #answerCache: boolean;
  #stopping = false;

  constructor(options: DispatcherOptions) {
    this.#catalog = options.catalog;
    this.#host = options.host;
    this.#harness = options.harness;
    this.#pool = new PoolChannels({ taskFile: options.poolTaskFile, threads: options.poolThreads, workerData: options.pool, generation: options.generation });
    this.#batches = new Batcher<PoolCall, CallOutcome>(
      (calls) => this.#pool.run(calls),
      // More calls are waiting than the bound: the server is saturated.
      (error) => ({ ok: false, code: 'busy', message: `the capability pool is saturated: ${errorMessage(error)}` }),
      { parallelism: options.poolThreads, maxBatch: 64, maxPending: MAX_PENDING_CALLS },
    );
    this.#answerCache = options.answerCache;
    this.#answers = this.#newAnswerCache();
  }

  /**
   * Answers from a new generation from now on: the answers remembered of the old one are dropped
   * (a computation of the old one still under way settles into the dropped cache, never this one).
   */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): void {
    this.#pool.useSnapshot(snapshot, generation);
    this.#answers = this.#newAnswerCache();
  }

  #newAnswerCache(): AnswerCache | null {
    return this.#answerCache ? new AnswerCache({ maxEntries: 1024, maxAnswerChars: 256 * 1024, maxTotalChars: 32 * 1024 * 1024 }) : null;
  }

  /**
   * Runs a call where its capability's `reads` says. `call` (progress, cancellation) reaches the
   * handlers that run outside the pool; a pool call is a pure query over the snapshot, quick and
   * silent, so it has nothing to report and nothing worth stopping.
   */
  async invoke(capabilityId: string, input: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome> {
    if (this.#stopping) return { ok: false, code: 'busy', message: 'the server is shutting down' };
    const entry = this.#catalog.byId(capabilityId);
    if (entry?.reads === 'peers') return this.#onMainThread(capabilityId, input, caller, call);
    if (entry?.reads === 'harness') return this.#inHarness(capabilityId, input, caller, call ?? {});
    // A query over a snapshot answers the same for the same input while its generation serves
    // (unless it reads more than the snapshot).
    if (this.#answers && entry?.kind === 'query' && entry.volatile !== true) return this.#answers.answer(capabilityId, input, () => this.#inPool(capabilityId, input, null));
    return this.#inPool(capabilityId, input, caller);
  }

  /** Refuses new calls and ends the pool. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#pool.stop();
  }

  #inPool(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome> {
    return this.#batches.submit([capabilityId, input, caller]);
  }

  async #inHarness(capabilityId: string, input: unknown, caller: string | null, call: CallContext): Promise<CallOutcome> {
    if (this.#harness === null) return { ok: false, code: 'refused', message: 'this server has no harness (it is not the shared server of a checkout)' };
    try {
      return await harnessCall(this.#harness, capabilityId, input, caller, call);
    } catch (error) {
      if (call.signal?.aborted) return { ok: false, code: 'internal', message: 'the call was cancelled' };
      return { ok: false, code: 'internal', message: `the harness thread did not answer: ${errorMessage(error)}` };
    }
  }

  #onMainThread(capabilityId: string, input: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome> {
    return invokeOnMainThread(this.#host, capabilityId, input, caller, call);
  }
}

/**
 * Runs a call in the main thread over `HostControl.invoke`; the call's progress comes back as
 * events of the `progress` stream, and its signal cancels the RPC (which aborts the handler's).
 * Every failure is an outcome.
 */
export async function invokeOnMainThread(
  host: RpcClient<HostControl>,
  capabilityId: string,
  input: unknown,
  caller: string | null,
  call?: CallContext,
): Promise<CallOutcome> {
  try {
    if (call === undefined) return await host.invoke(capabilityId, input, caller);
    const { onProgress, signal } = call;
    return await host.callWith('invoke', [capabilityId, input, caller], {
      ...(onProgress ? { onEvent: (stream: string, data: unknown) => stream === PROGRESS_STREAM && typeof data === 'string' && onProgress(data) } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (call?.signal?.aborted) return { ok: false, code: 'internal', message: 'the call was cancelled' };
    return { ok: false, code: 'internal', message: `the main thread did not answer: ${errorMessage(error)}` };
  }
}
