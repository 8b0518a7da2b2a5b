/**
 * A piscina task: run one capability over the frozen snapshot. The snapshot is decoded once when
 * the pool thread starts; each call is a pure function of it.
 */
import { workerData } from 'node:worker_threads';
import { decodeSnapshot } from '../src/layer/snapshot.js';
import { createLayerView } from '../src/layer/view.js';
import { BUILTIN_CAPABILITIES } from '../src/registry/builtins.js';
import { buildRegistry } from '../src/registry/registry.js';
import { Runtime } from '../src/runtime/runtime.js';
import { yieldToMainThread } from './priority.js';
import type { CallOutcome, PoolTask, PoolWorkerData } from './types.js';

yieldToMainThread();

const { snapshot } = workerData as PoolWorkerData;
const runtime = new Runtime({
  registry: buildRegistry(BUILTIN_CAPABILITIES),
  layer: createLayerView(decodeSnapshot(snapshot).index),
  board: null,
  url: () => null,
});

/** Runs one batch of calls (see src/http/batcher.ts); answers in the same order. */
export function runCapabilities(tasks: PoolTask[]): Promise<CallOutcome[]> {
  return Promise.all(tasks.map((task) => runtime.outcome(task.capabilityId, task.input, task.caller)));
}
