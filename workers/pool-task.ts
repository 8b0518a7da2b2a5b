/**
 * A piscina task: run capabilities over a generation's snapshot. Each batch names its generation;
 * a pool thread decodes a generation's snapshot once, the first time a batch of it arrives (the
 * start one from its workerData), and each call is a pure function of it.
 */
import { workerData } from 'node:worker_threads';
import { BUILTIN_CAPABILITIES } from '../src/capabilities/index.js';
import { buildRegistry } from '../src/registry/registry.js';
import { Runtime } from '../src/runtime/runtime.js';
import { decodeSnapshot, snapshotView } from '../src/threads/snapshot.js';
import type { CallOutcome } from '../src/platform/call.js';
import type { PoolBatch, PoolWorkerData } from '../src/threads/pool.js';
import { yieldToMainThread } from '../src/platform/priority.js';

const data = workerData as PoolWorkerData;
yieldToMainThread(data.nice);

// Decoded in a function so that nothing but the runtime holds the first generation.
const runtime = ((first) =>
  new Runtime({
    registry: buildRegistry(BUILTIN_CAPABILITIES),
    layer: snapshotView(first),
    generation: first.generation,
    board: null,
    url: () => null,
    faultCapability: data.faultCapability,
  }))(decodeSnapshot(data.snapshot));

/**
 * Runs one batch of calls (see src/http/batcher.ts) over its generation, or a newer one this thread
 * already holds (a batch queued before a swap: its callers asked before the swap, a newer answer is
 * as good, and decoding an old generation again would be wasted); answers in the same order.
 */
export function runCapabilities(batch: PoolBatch): Promise<CallOutcome[]> {
  if (batch.generation > runtime.generation) {
    runtime.useGeneration(batch.generation, snapshotView(decodeSnapshot(batch.snapshot)));
  }
  return Promise.all(batch.tasks.map((task) => runtime.outcome(task.capabilityId, task.input, task.caller)));
}
