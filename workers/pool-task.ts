/**
 * A piscina task's entry: each pool thread runs the batches of capability calls the HTTP thread
 * sends it (`PoolBatch`, src/threads/pool.ts) over its body (src/hub/pool-service.ts).
 */
import { workerData } from 'node:worker_threads';
import { PoolService } from '../src/hub/pool-service.js';
import type { CallOutcome } from '../src/platform/call.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import type { PoolBatch, PoolWorkerData } from '../src/threads/pool.js';

const data = workerData as PoolWorkerData;
yieldToMainThread(data.nice);

const pool = new PoolService(data);

/** Runs one batch over its generation; answers in the same order (piscina calls it by name). */
export function runCapabilities(batch: PoolBatch): Promise<CallOutcome[]> {
  return pool.run(batch);
}
