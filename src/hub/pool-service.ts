/**
 * What a pool thread runs (workers/pool-task.ts is its wiring): capabilities over a generation's
 * snapshot, each call a pure function of it. Each batch names its generation; a pool thread
 * decodes a generation's snapshot once, the first time a batch of it arrives (the first one from
 * its start data).
 */
import { BUILTIN_CAPABILITIES } from '../capabilities/index.js';
import type { CallOutcome } from '../platform/call.js';
import { buildRegistry } from '../registry/registry.js';
import { Runtime } from '../runtime/runtime.js';
import type { PoolBatch, PoolWorkerData } from '../threads/pool.js';
import { decodeSnapshot, snapshotView } from '../threads/snapshot.js';

export class PoolService {
  readonly #runtime: Runtime;

  constructor(data: PoolWorkerData) {
    // Decoded here so that nothing but the runtime holds the first generation.
    const first = decodeSnapshot(data.snapshot);
    this.#runtime = new Runtime({
      registry: buildRegistry(BUILTIN_CAPABILITIES),
      layer: snapshotView(first),
      generation: first.generation,
      board: null,
      url: () => null,
      faultCapability: data.faultCapability,
    });
  }

  /**
   * Runs one batch of calls (see src/http/batcher.ts) over its generation, or a newer one this
   * thread already holds (a batch queued before a swap: its callers asked before the swap, a newer
   * answer is as good, and decoding an old generation again would be wasted); answers in order.
   */
  run(batch: PoolBatch): Promise<CallOutcome[]> {
    const runtime = this.#runtime;
    if (batch.generation > runtime.generation) {
      runtime.useGeneration(batch.generation, snapshotView(decodeSnapshot(batch.snapshot)));
    }
    return Promise.all(batch.tasks.map((task) => runtime.outcome(task.capabilityId, task.input, task.caller)));
  }
}
