/**
 * What a pool thread runs (workers/pool-task.ts is its wiring): capabilities over a generation's
 * snapshot, each call a pure function of it, served over the channel the HTTP thread hands it
 * (src/threads/pool.ts). A pool thread decodes a generation's snapshot once: the first at its
 * start, each later one when it arrives on the channel, before the batches that name it.
 */
import type { MessagePort } from 'node:worker_threads';
import { BUILTIN_CAPABILITIES } from '../capabilities/index.js';
import type { CallOutcome } from '../platform/call.js';
import { errorMessage } from '../platform/errors.js';
import { buildRegistry } from '../registry/registry.js';
import { Runtime } from '../runtime/runtime.js';
import type { PoolCall, PoolInbound, PoolOutbound, PoolWorkerData } from '../threads/pool.js';
import { decodeSnapshot, snapshotView, type SnapshotContent } from '../threads/snapshot.js';
import type { LayerView } from '../layer/view.js';

export class PoolService {
  readonly #runtime: Runtime;

  constructor(data: PoolWorkerData) {
    // Decoded here so that nothing but the runtime holds the first generation.
    const first = decodeSnapshot(data.snapshot);
    this.#runtime = new Runtime({
      registry: buildRegistry(BUILTIN_CAPABILITIES),
      layer: servingView(first),
      generation: first.generation,
      board: null,
      url: () => null,
      faultCapability: data.faultCapability,
    });
  }

  /** Serves the HTTP thread's calls on `port` until it is closed. */
  serve(port: MessagePort): Promise<void> {
    return new Promise((resolve) => {
      port.on('message', (message: PoolInbound) => {
        if (message.type === 'snapshot') this.#useSnapshot(message.generation, message.snapshot);
        else void this.#answer(port, message.id, message.calls);
      });
      port.once('close', resolve);
      post(port, { type: 'ready' });
    });
  }

  /**
   * A generation newer than the one served (an older one arriving late is skipped: its callers
   * asked before the swap, a newer answer is as good, and decoding it again would be wasted).
   */
  #useSnapshot(generation: number, snapshot: SharedArrayBuffer): void {
    if (generation <= this.#runtime.generation) return;
    this.#runtime.useGeneration(generation, servingView(decodeSnapshot(snapshot)));
  }

  async #answer(port: MessagePort, id: number, text: string): Promise<void> {
    let outcomes: CallOutcome[];
    try {
      const calls = JSON.parse(text) as PoolCall[];
      outcomes = await Promise.all(calls.map(([capabilityId, input, caller]) => this.#runtime.outcome(capabilityId, input, caller)));
    } catch (error) {
      // Not a call's failure (each is an outcome): the batch itself was unreadable.
      outcomes = [{ ok: false, code: 'internal', message: `the pool could not read a batch: ${errorMessage(error)}` }];
    }
    post(port, { type: 'answers', id, outcomes });
  }
}

/**
 * A generation's view with its search index loaded now: the pool answers HTTP searches, and the
 * load (100–400 ms for 5,000 documents) belongs to the generation's arrival, not to a caller's
 * first search.
 */
function servingView(content: SnapshotContent): LayerView {
  const view = snapshotView(content);
  view.loadSearch();
  return view;
}

function post(port: MessagePort, message: PoolOutbound): void {
  port.postMessage(message);
}
