/**
 * The main thread's handle on the layer build worker: starts it with the serving snapshot, and
 * hands each new generation it builds to `onGeneration` (the caller swaps it into every thread and
 * tells the MCP clients), one at a time, in order. The main thread only decodes the new snapshot;
 * watching, building and encoding happen in the worker.
 */
import { errorMessage } from '../platform/errors.js';
import type { Diagnostic, LayerIndex } from '../layer/types.js';
import type { LayerView } from '../layer/view.js';
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import { decodeSnapshot, snapshotView } from '../threads/snapshot.js';
import type { DiscoveryMode } from '../layer/types.js';
import type { LayerBuildMessage, LayerBuildWorkerData } from '../threads/layer-build.js';
import { startThread } from '../platform/worker.js';

/** A burst of changes is built once nothing changed for this long… */
export const RELOAD_QUIET_MS = 50;
/** …or this long after its first change, however busy it stays. */
export const RELOAD_MAX_WAIT_MS = 1_000;

/** One new generation, decoded, with what changed against the one it replaces. */
export interface Generation {
  generation: number;
  snapshot: SharedArrayBuffer;
  index: LayerIndex;
  /** Its view, searched through the snapshot's search index. */
  layer: LayerView;
  changed: readonly string[];
  failed: string | null;
  /** The first few diagnostics the previous generation did not have, and how many there were in all. */
  fresh: readonly Diagnostic[];
  freshCount: number;
  ms: number;
}

export interface FreshnessOptions {
  snapshot: SharedArrayBuffer;
  discovery: DiscoveryMode;
  /** The local half the server writes to, when known (the shared server's lease is there). */
  localPath?: string;
  onGeneration(generation: Generation): Promise<void> | void;
}

export interface LayerFreshness {
  /** Ends the worker; a build under way is dropped. Safe to call twice. */
  stop(): Promise<void>;
}

/** One log line per reload (docs/MCP.md, "Every log line"). */
export function reloadLine(next: Generation): string {
  const { index } = next;
  const failed = next.failed === null ? '' : ` — the rebuild failed (${next.failed}), the last good objects are served`;
  return `layer generation ${next.generation}: ${index.objects.length} objects, ${index.diagnostics.length} diagnostics (${index.state}), ${next.changed.length} changed, built in ${next.ms} ms${failed}`;
}

/** A warning per new diagnostic of a reload (the first few, then how many more): a broken edit reaches the MCP clients' logs. */
export function freshDiagnosticLines(next: Generation): string[] {
  const lines = next.fresh.map((d) => `layer generation ${next.generation}: ${d.path}: ${d.message} (${d.severity} ${d.code})`);
  const more = next.freshCount - next.fresh.length;
  if (more > 0) lines.push(`layer generation ${next.generation}: ${more} more new diagnostics (the info capability lists them all)`);
  return lines;
}

export function startFreshness(options: FreshnessOptions): LayerFreshness {
  const workerData: LayerBuildWorkerData = {
    snapshot: options.snapshot,
    discovery: options.discovery,
    localPath: options.localPath ?? null,
    quietMs: RELOAD_QUIET_MS,
    maxWaitMs: RELOAD_MAX_WAIT_MS,
    nice: settings().httpNice,
  };
  let swaps: Promise<void> = Promise.resolve();
  const thread = startThread({
    name: 'the layer build worker',
    file: new URL('../../workers/layer-build.js', import.meta.url),
    workerData,
    // The worker never keeps the process alive: a server ends when its clients do.
    unref: true,
    // A build under way is dropped; a swap under way finishes.
    afterStop: () => swaps,
    onError: (error) => {
      if (!thread.stopping) log.error(`the layer build worker failed (the layer is no longer refreshed): ${error.stack ?? error.message}`);
    },
  });
  thread.worker.on('message', (message: LayerBuildMessage) => {
    if (thread.stopping) return;
    if (message.type === 'watching') {
      log.debug(`layer: watching ${message.directories} directories for changes`);
    } else if (message.type === 'unchanged') {
      log.debug(`layer: rebuilt in ${message.ms} ms, nothing changed`);
    } else if (message.type === 'error') {
      log.error(`layer: a rebuild failed (the serving generation stays; the next edit tries again): ${message.reason}`);
    } else {
      swaps = swaps.then(async () => {
        if (thread.stopping) return;
        const next: Generation = {
          generation: message.generation,
          snapshot: message.snapshot,
          ...decodedLayer(message.snapshot),
          changed: message.changed,
          failed: message.failed,
          fresh: message.fresh,
          freshCount: message.freshCount,
          ms: message.ms,
        };
        try {
          await options.onGeneration(next);
          (next.failed === null ? log.info : log.warn)(reloadLine(next));
          for (const line of freshDiagnosticLines(next)) log.warn(line);
        } catch (error) {
          log.error(`cannot serve layer generation ${next.generation}: ${errorMessage(error)}`);
        }
      });
    }
  });
  return { stop: () => thread.stop() };
}

function decodedLayer(snapshot: SharedArrayBuffer): { index: LayerIndex; layer: LayerView } {
  const content = decodeSnapshot(snapshot);
  return { index: content.index, layer: snapshotView(content) };
}
