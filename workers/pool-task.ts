/**
 * A piscina task: run capabilities over the frozen snapshot. The snapshot is decoded once when
 * the pool thread starts; each call is a pure function of it.
 */
import { workerData } from 'node:worker_threads';
import { createLayerView } from '../src/layer/view.js';
import { BUILTIN_CAPABILITIES } from '../src/registry/builtins.js';
import { buildRegistry } from '../src/registry/registry.js';
import { Runtime } from '../src/runtime/runtime.js';
import { decodeSnapshot } from '../src/threads/snapshot.js';
import type { CallOutcome, PoolTask, PoolWorkerData } from '../src/threads/types.js';
import { yieldToMainThread } from './priority.js';

const data = workerData as PoolWorkerData;
yieldToMainThread(data.nice);

const content = decodeSnapshot(data.snapshot);
const runtime = new Runtime({
  registry: buildRegistry(BUILTIN_CAPABILITIES),
  layer: createLayerView(content.index, content.search),
  board: null,
  url: () => null,
  faultCapability: data.faultCapability,
});

/** Runs one batch of calls (see src/http/batcher.ts); answers in the same order. */
export function runCapabilities(tasks: PoolTask[]): Promise<CallOutcome[]> {
  return Promise.all(tasks.map((task) => runtime.outcome(task.capabilityId, task.input, task.caller)));
}
