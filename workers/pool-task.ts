/**
 * A pool thread's entry (piscina): it runs one task, `attachPoolChannel`, that serves the HTTP
 * thread's calls on the port it is handed (src/threads/pool.ts) over its body
 * (src/hub/pool-service.ts), until the HTTP thread closes the port.
 */
import { workerData } from 'node:worker_threads';
import { PoolService } from '../src/hub/pool-service.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import type { PoolAttach, PoolWorkerData } from '../src/threads/pool.js';

const data = workerData as PoolWorkerData;
yieldToMainThread(data.nice);

const pool = new PoolService(data);

/** Serves the calls of one channel until it closes (piscina calls it by name). */
export function attachPoolChannel(attach: PoolAttach): Promise<void> {
  return pool.serve(attach.port);
}
