/** The contract of the layer build worker (workers/layer-build.ts): its start data and what it posts. */
import type { Diagnostic, DiscoveryMode } from '../layer/types.js';

/** Given to the layer build worker at start (workers/layer-build.ts). */
export interface LayerBuildWorkerData {
  /** The serving generation's snapshot (the worker merges every build over it). */
  snapshot: SharedArrayBuffer;
  discovery: DiscoveryMode;
  /**
   * The local half the server writes to (relative to the root), when the caller knows it; else the
   * worker reads it from the manifest, with the repo half.
   */
  localPath: string | null;
  /** Debounce of a burst of changes (src/layer/rebuild-scheduler.ts). */
  quietMs: number;
  maxWaitMs: number;
  nice: number;
}

/** What the layer build worker posts to the main thread. */
export type LayerBuildMessage =
  | { type: 'watching'; directories: number }
  | {
      type: 'generation';
      generation: number;
      snapshot: SharedArrayBuffer;
      /** URIs that appeared, vanished or changed. */
      changed: string[];
      /** Why the build failed as a whole (the last good objects are served), or null. */
      failed: string | null;
      objects: number;
      diagnostics: number;
      /** The diagnostics the serving generation did not have (the first few: the main thread logs them). */
      fresh: Diagnostic[];
      /** How many new diagnostics there were in all. */
      freshCount: number;
      ms: number;
    }
  | { type: 'unchanged'; ms: number }
  /** A build that threw (the serving generation stays). */
  | { type: 'error'; reason: string };
