/**
 * The public entry of the layer: find the root, read the manifest, build the index, and apply
 * `--strict`. Everything a projection needs from `src/layer/` is exported here.
 */
import { resolve } from 'node:path';
import { MajordomusError } from '../platform/errors.js';
import { buildIndex } from './build-index.js';
import { verifyLocalHalf } from './local-half.js';
import { readManifest } from './manifest.js';
import { findRoot } from './root.js';
import type { Diagnostic, DiscoveryMode, LayerIndex } from './types.js';

export { buildIndex, MAX_FILE_BYTES } from './build-index.js';
export { repositoryId } from './repository-id.js';
export { findRoot, type RootLocation } from './root.js';
export { verifyLocalHalf } from './local-half.js';
export { readManifest, parseManifest, MANIFEST_PATH, type Manifest } from './manifest.js';
export { KIND_SCHEMAS, KINDS, objectUri } from './kinds.js';
export { searchObjects, type SearchHit, type SearchOptions } from './search.js';

/** Which layer to serve and how: the command line's `--repo`, `--discovery` and `--strict`. */
export interface LayerSelection {
  /** `--repo DIR`: replaces the working directory as the start of the search (relative to it). */
  repo?: string;
  discovery: DiscoveryMode;
  /** Refuse a degraded index (MAJ_LAYER_DEGRADED) instead of serving it. */
  strict: boolean;
}

/** How to load the layer: the selection, and where the process runs (the search starts there unless `repo` is given). */
export interface LoadOptions extends LayerSelection {
  cwd: string;
}

/** One diagnostic on one line, as logs and error messages show it. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  return `${diagnostic.severity} ${diagnostic.code} ${diagnostic.path}: ${diagnostic.message}`;
}

/**
 * Finds the root, reads its manifest, checks the local half and builds the index; see LoadOptions
 * for the refusals.
 */
export async function loadLayer(options: LoadOptions): Promise<LayerIndex> {
  const start = options.repo === undefined ? resolve(options.cwd) : resolve(options.cwd, options.repo);
  const { root, manifestPath } = await findRoot(start);
  const manifest = await readManifest(manifestPath);
  // Refused here too, though loading writes nothing: `--inspect` answers what `mcp` would.
  await verifyLocalHalf(root, manifest.localPath);
  const index = await buildIndex(root, manifest, options.discovery);
  if (options.strict && index.state === 'degraded') {
    const lines = index.diagnostics.map((diagnostic) => `  - ${formatDiagnostic(diagnostic)}`);
    throw new MajordomusError(
      'MAJ_LAYER_DEGRADED',
      `--strict refuses the degraded layer at ${index.root} (${index.diagnostics.length} ${index.diagnostics.length === 1 ? 'diagnostic' : 'diagnostics'}):\n${lines.join('\n')}`,
    );
  }
  return index;
}
