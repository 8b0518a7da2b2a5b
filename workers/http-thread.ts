/**
 * The HTTP thread's entry: what it serves the main thread (`HttpControl`, src/threads/http.ts)
 * over its body (src/http/http-service.ts: the HTTP engine, the router, the dispatcher and the
 * pool, the `/mcp` sessions, the gateway, the live page).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HttpService } from '../src/http/http-service.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import { serveRpc } from '../src/platform/rpc.js';
import type { HttpControl, HttpWorkerData } from '../src/threads/http.js';

const data = workerData as HttpWorkerData;
yieldToMainThread(data.nice);

const http = await HttpService.start(data);
serveRpc<HttpControl>(data.controlPort, {
  setLeaseholder: async (leaseholder) => http.setLeaseholder(leaseholder),
  setPeerCount: async (count) => http.setPeerCount(count),
  notifyPeer: async (peerId, method, params, requires) => http.notifyPeer(peerId, method, params, requires),
  useSnapshot: async (snapshot, generation) => http.useSnapshot(snapshot, generation),
  changed: async (topic) => http.changed(topic),
  stop: () => http.stop(),
});

parentPort?.postMessage(http.started);
if (http.started.type === 'failed') await http.stop();
