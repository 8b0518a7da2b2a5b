/**
 * The harness thread's entry: what it serves (`HarnessControl`, src/threads/harness.ts) to the main
 * thread (its own stdio client's calls) and to the HTTP thread (every `/mcp` and REST caller), each
 * over its own port, from its body (src/hub/harness-service.ts: the checkout's session table, the
 * task board, the agents' processes — all off the owner's stdio path, invariant 3).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HarnessService } from '../src/hub/harness-service.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import { serveRpc, type RpcServed } from '../src/platform/rpc.js';
import type { HarnessControl, HarnessWorkerData } from '../src/threads/harness.js';

const data = workerData as HarnessWorkerData;
// Agents inherit this thread's priority: they yield the CPU to the owner's own client too.
yieldToMainThread(data.nice);

const harness = new HarnessService(data);
const control: RpcServed<HarnessControl> = {
  invoke: (capabilityId, input, caller, depth, task, scope) => harness.invoke(capabilityId, input, caller, depth, task, scope),
  notices: (scope) => harness.notices(scope),
  changes: (scope) => harness.changes(scope),
  news: (scope) => harness.news(scope),
  agentDepth: async (pids) => harness.agentDepth(pids),
  recordUsage: async (records) => harness.recordUsage(records),
  useSnapshot: async (snapshot, generation) => harness.useSnapshot(snapshot, generation),
  pageState: () => harness.pageState(),
  stop: () => harness.stop(),
};
serveRpc<HarnessControl>(data.mainPort, control);
serveRpc<HarnessControl>(data.httpPort, control);

parentPort?.postMessage(await harness.adopt());
