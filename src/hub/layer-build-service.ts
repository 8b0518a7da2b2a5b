/**
 * What the layer build worker runs (workers/layer-build.ts is its wiring): it watches what the
 * layer is built from and, after a change, builds the next generation and encodes its snapshot
 * here, off the main thread (the owner's stdio session never waits on a build). The main thread
 * receives each new generation ready to swap (src/hub/layer-thread.ts).
 */
import { performance } from 'node:perf_hooks';
import { newDiagnostics } from '../layer/changes.js';
import { LayerGenerations } from '../layer/generations.js';
import { RebuildScheduler } from '../layer/rebuild-scheduler.js';
import { watchLayer } from '../layer/watch-layer.js';
import { errorMessage } from '../platform/errors.js';
import type { LayerBuildMessage, LayerBuildWorkerData } from '../threads/layer-build.js';
import { decodeSnapshot, layerSnapshot } from '../threads/snapshot.js';

/** At most this many new diagnostics of a generation are posted (and logged) one by one. */
export const FRESH_DIAGNOSTICS_LOGGED = 5;

/** Watches the layer and posts each build's outcome; resolves once watching (after posting `watching`). */
export async function serveLayerBuilds(data: LayerBuildWorkerData, post: (message: LayerBuildMessage) => void): Promise<void> {
  // Of the first snapshot only what every generation carries is kept: a later one must not keep it alive.
  const { version, capabilities, generations } = ((first) => ({
    version: first.version,
    capabilities: first.capabilities,
    generations: new LayerGenerations({ index: first.index, generation: first.generation, search: first.search, discovery: data.discovery }),
  }))(decodeSnapshot(data.snapshot));

  const build = async (): Promise<void> => {
    const started = performance.now();
    const ms = (): number => Math.round(performance.now() - started);
    try {
      const before = generations.serving;
      const changed = await generations.next((next) => {
        const snapshot = layerSnapshot({ version, generation: next.generation, index: next.index, capabilities, search: next.search });
        const fresh = newDiagnostics(before, next.index);
        post({
          type: 'generation',
          generation: next.generation,
          snapshot,
          changed: next.changed,
          failed: next.failed,
          objects: next.index.objects.length,
          diagnostics: next.index.diagnostics.length,
          fresh: fresh.slice(0, FRESH_DIAGNOSTICS_LOGGED),
          freshCount: fresh.length,
          ms: ms(),
        });
      });
      if (!changed) post({ type: 'unchanged', ms: ms() });
    } catch (error) {
      // The serving generation stays (and so does its search index).
      post({ type: 'error', reason: errorMessage(error) });
    }
  };
  const scheduler = new RebuildScheduler({ quietMs: data.quietMs, maxWaitMs: data.maxWaitMs, build });
  const watcher = await watchLayer(generations.serving.root, data.discovery, data.localPath, () => scheduler.poke());
  post({ type: 'watching', directories: watcher.directories });
}
