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
import type { LayerBuildMessage, LayerBuildWorkerData } from '../src/threads/types.js';
import { yieldToMainThread } from './priority.js';

const data = workerData as LayerBuildWorkerData;
yieldToMainThread(data.nice);

const first = decodeSnapshot(data.snapshot);
let serving = first.index;
let generation = first.generation;
// Kept from one build to the next so that a reload costs what changed: what each file made (the
// first build parses everything), and the search index, updated with the objects that changed.
const parsed = new ParsedFiles();
const search = LiveSearchIndex.load(first.search, serving.objects);
const post = (message: LayerBuildMessage): void => parentPort?.postMessage(message);

const scheduler = new RebuildScheduler({
  quietMs: data.quietMs,
  maxWaitMs: data.maxWaitMs,
  build: async () => {
    const started = performance.now();
    const rebuilt = await rebuildLayer(serving, data.discovery, parsed);
    if (sameLayer(serving, rebuilt.index, rebuilt.changed)) {
      post({ type: 'unchanged', ms: Math.round(performance.now() - started) });
      return;
    }
    serving = rebuilt.index;
    generation += 1;
    search.update(serving.objects);
    const snapshot = layerSnapshot({ version: first.version, generation, index: serving, capabilities: first.capabilities, search: search.toJSON() });
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
