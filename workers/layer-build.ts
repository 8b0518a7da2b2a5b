/**
 * The layer build worker: watches what the layer is built from, and on a change rebuilds the index
 * and encodes the next generation's snapshot here, off the main thread (the owner's stdio session
 * never waits on a build). It keeps the serving generation so that each build keeps the last good
 * objects of files that now fail; the main thread receives each new generation ready to swap.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { sameLayer } from '../src/layer/changes.js';
import { DEFAULT_LOCAL_PATH, MANIFEST_PATH } from '../src/layer/identity.js';
import { DEFAULT_REPO_PATH, readManifest } from '../src/layer/manifest.js';
import { ParsedFiles } from '../src/layer/parsed-files.js';
import { rebuildLayer } from '../src/layer/rebuild.js';
import { RebuildScheduler } from '../src/layer/rebuild-scheduler.js';
import { LiveSearchIndex } from '../src/layer/search.js';
import { gitWatchFiles, layerTrees, LayerWatcher } from '../src/layer/watch.js';
import { decodeSnapshot, layerSnapshot } from '../src/threads/snapshot.js';
import type { LayerIndex } from '../src/layer/types.js';
import type { LayerBuildMessage, LayerBuildWorkerData } from '../src/threads/layer-build.js';
import { errorMessage } from '../src/platform/errors.js';
import { yieldToMainThread } from '../src/platform/priority.js';

const data = workerData as LayerBuildWorkerData;
yieldToMainThread(data.nice);

// Kept from one build to the next so that a reload costs what changed: what each file made (the
// first build parses everything), and the search index, updated with the objects that changed.
// Nothing else of the first snapshot is held: a later generation must not keep it alive.
let serving: LayerIndex;
let generation: number;
const { version, capabilities, search } = (() => {
  const first = decodeSnapshot(data.snapshot);
  serving = first.index;
  generation = first.generation;
  return { version: first.version, capabilities: first.capabilities, search: LiveSearchIndex.load(first.search, first.index.objects) };
})();
const parsed = new ParsedFiles();
const post = (message: LayerBuildMessage): void => parentPort?.postMessage(message);

const scheduler = new RebuildScheduler({
  quietMs: data.quietMs,
  maxWaitMs: data.maxWaitMs,
  build: async () => {
    const started = performance.now();
    try {
      const rebuilt = await rebuildLayer(serving, data.discovery, parsed);
      if (sameLayer(serving, rebuilt.index, rebuilt.changed)) {
        post({ type: 'unchanged', ms: Math.round(performance.now() - started) });
        return;
      }
      search.update(rebuilt.index.objects);
      const snapshot = layerSnapshot({ version, generation: generation + 1, index: rebuilt.index, capabilities, search: search.toJSON() });
      // Only a generation posted becomes the one the next build compares with.
      serving = rebuilt.index;
      generation += 1;
      post({
        type: 'generation',
        generation,
        snapshot,
        changed: rebuilt.changed,
        failed: rebuilt.failed,
        objects: serving.objects.length,
        diagnostics: serving.diagnostics.length,
        ms: Math.round(performance.now() - started),
      });
    } catch (error) {
      // The serving generation stays; the search index is brought back to it.
      search.update(serving.objects);
      post({ type: 'error', reason: errorMessage(error) });
    }
  },
});

// The halves as the manifest says now (the server validated it at start; if it broke since, the
// defaults are watched and the first build reports the manifest).
const manifest = await readManifest(join(serving.root, ...MANIFEST_PATH.split('/'))).catch(() => null);
const watcher = await LayerWatcher.start(
  {
    root: serving.root,
    trees: layerTrees(manifest?.repoPath ?? DEFAULT_REPO_PATH),
    localPath: data.localPath ?? manifest?.localPath ?? DEFAULT_LOCAL_PATH,
    files: data.discovery === 'vcs' ? await gitWatchFiles(serving.root) : [],
  },
  () => scheduler.poke(),
);
post({ type: 'watching', directories: watcher.directories });
