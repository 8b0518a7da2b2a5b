/**
 * The layer build worker's entry: it watches the layer and posts each new generation's snapshot
 * (`LayerBuildMessage`, src/threads/layer-build.ts) to the main thread, from its body
 * (src/hub/layer-build-service.ts). It serves no calls: the main thread ends it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { serveLayerBuilds } from '../src/hub/layer-build-service.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import type { LayerBuildMessage, LayerBuildWorkerData } from '../src/threads/layer-build.js';

const data = workerData as LayerBuildWorkerData;
yieldToMainThread(data.nice);

await serveLayerBuilds(data, (message: LayerBuildMessage) => parentPort?.postMessage(message));
