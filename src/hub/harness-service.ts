/**
 * What the harness thread runs (workers/harness-thread.ts is its wiring): the session table, the
 * task board and their runtime (src/runtime/harness-runtime.ts), served to the main and the HTTP
 * thread as `HarnessControl`. A call's RPC scope becomes its CallContext (a follow's lines go back
 * as events, a cancel aborts it); the notices and the page's changes are subscriptions that end
 * when the caller cancels or the thread stops.
 */
import { PROGRESS_STREAM, TASK_STREAM, type CallOutcome } from '../platform/call.js';
import { errorMessage } from '../platform/errors.js';
import type { RpcCallScope } from '../platform/rpc.js';
import { pageHarnessState } from '../page/harness-state.js';
import type { PageHarnessState } from '../page/state.js';
import { HarnessRuntime } from '../runtime/harness-runtime.js';
import type { UsageRecord } from '../tasks/usage.js';
import { CHANGE_STREAM, NEWS_STREAM, NOTICE_STREAM, type HarnessStartMessage, type HarnessWorkerData } from '../threads/harness.js';
import { decodeSnapshot, snapshotView } from '../threads/snapshot.js';

/** The live page needs no more than this many change events a second (see `changes`). */
const CHANGE_INTERVAL_MS = 10;

/**
 * At most one `emit` per `intervalMs`: the first at once, the last never lost (it goes when the
 * interval ends).
 */
function paced<T>(emit: (value: T) => void, intervalMs: number): { tell(value: T): void; cancel(): void } {
  let timer: NodeJS.Timeout | null = null;
  let pending: { value: T } | null = null;
  const rearm = (): void => {
    timer = setTimeout(() => {
      timer = null;
      if (pending === null) return;
      const { value } = pending;
      pending = null;
      emit(value);
      rearm();
    }, intervalMs);
  };
  return {
    tell(value) {
      if (timer !== null) {
        pending = { value };
        return;
      }
      emit(value);
      rearm();
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
    },
  };
}

export class HarnessService {
  readonly #data: HarnessWorkerData;
  readonly #served: HarnessRuntime;
  /** Aborts when the thread stops: every subscription ends. */
  readonly #stopping = new AbortController();
  #stopped: Promise<void> | null = null;

  constructor(data: HarnessWorkerData) {
    this.#data = data;
    // Decoded here so that only the runtime holds the first generation: a later one must not keep it alive.
    const first = decodeSnapshot(data.snapshot);
    this.#served = new HarnessRuntime({
      layer: snapshotView(first),
      generation: first.generation,
      harnessDir: data.harnessDir,
      depth: data.depth,
      faultCapability: data.faultCapability,
      killGraceMs: data.killGraceMs,
    });
  }

  /** Takes over what an earlier server left; what the main thread is told once the thread is ready. */
  async adopt(): Promise<HarnessStartMessage> {
    try {
      await this.#served.adopt();
      return { type: 'ready' };
    } catch (error) {
      return { type: 'failed', reason: `cannot read the harness's sessions in ${this.#data.harnessDir}: ${errorMessage(error)}` };
    }
  }

  invoke(capabilityId: string, input: unknown, caller: string | null, depth: number | null, task: boolean, scope: RpcCallScope): Promise<CallOutcome> {
    return this.#served.runtime.outcome(capabilityId, input, caller, {
      onProgress: (line) => scope.emit(PROGRESS_STREAM, line),
      signal: scope.signal,
      ...(depth === null ? {} : { depth }),
      ...(task ? { onTask: (taskId: string) => scope.emit(TASK_STREAM, taskId) } : {}),
    });
  }

  /** What each turn's start and end means to the readers of sessions, as events of the `harness-news` stream. */
  news(scope: RpcCallScope): Promise<void> {
    return this.#subscription(scope, () => this.#served.onNews((news) => scope.emit(NEWS_STREAM, news)));
  }

  /** Each notice for a peer, as an event of the `notice` stream. */
  notices(scope: RpcCallScope): Promise<void> {
    return this.#subscription(scope, () => this.#served.onNotice((notice) => scope.emit(NOTICE_STREAM, notice)));
  }

  /**
   * Each change the live page shows, as an event of the `page-change` stream, at most one per
   * CHANGE_INTERVAL_MS: an agent printing thousands of lines a second costs the HTTP thread a
   * hundred events, not thousands.
   */
  changes(scope: RpcCallScope): Promise<void> {
    return this.#subscription(scope, () => {
      const pace = paced<string>((session) => scope.emit(CHANGE_STREAM, session), CHANGE_INTERVAL_MS);
      const unsubscribe = this.#served.onChange(pace.tell);
      return () => {
        unsubscribe();
        pace.cancel();
      };
    });
  }

  agentDepth(pids: number[]): number | null {
    return this.#served.harness.agentDepthOf(pids);
  }

  recordUsage(records: readonly UsageRecord[]): void {
    for (const record of records) this.#served.recordUsage(record);
  }

  /** Serves a newer generation of the layer; an older or the same one is not even decoded. */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): void {
    if (generation <= this.#served.generation) return;
    this.#served.useGeneration(generation, snapshotView(decodeSnapshot(snapshot)));
  }

  pageState(): Promise<PageHarnessState> {
    return pageHarnessState(this.#served.harness, this.#served.tasks);
  }

  /** Ends every subscription and stops every running agent, then the ports. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping.abort();
      await this.#served.stop();
      const data = this.#data;
      setImmediate(() => {
        data.mainPort.close();
        data.httpPort.close();
      });
    })();
    return this.#stopped;
  }

  /** Keeps what `subscribe` set up until the caller cancels or the thread stops; then undoes it. */
  #subscription(scope: RpcCallScope, subscribe: () => () => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const unsubscribe = subscribe();
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        unsubscribe();
        resolve();
      };
      for (const signal of [scope.signal, this.#stopping.signal]) {
        if (signal.aborted) end();
        else signal.addEventListener('abort', end, { once: true });
      }
    });
  }
}
