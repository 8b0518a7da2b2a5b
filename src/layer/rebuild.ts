/**
 * One reload of a serving layer: the manifest read again at the known root (never a search
 * upward: a broken manifest must not make another layer take its place), the index built, and the
 * serving generation's last good objects kept where a file now fails (src/layer/last-good.ts). A
 * reload never refuses: `--strict` decides at start only, a running server keeps serving.
 */
import { join } from 'node:path';
import { errorMessage, MajordomusError } from '../platform/errors.js';
import { buildIndex } from './build-index.js';
import { changedUris } from './changes.js';
import { MANIFEST_PATH } from './identity.js';
import { keepAfterFailure, keepLastGood } from './last-good.js';
import { verifyLocalHalf } from './local-half.js';
import { readManifest, type Manifest } from './manifest.js';
import type { ParsedFiles } from './parsed-files.js';
import type { DiscoveryMode, LayerIndex } from './types.js';

export interface Rebuilt {
  index: LayerIndex;
  /** URIs that appeared, vanished or changed against the serving index. */
  changed: string[];
  /** Why the build failed as a whole (the serving objects were kept), or null. */
  failed: string | null;
  /** The manifest read, when it could be. */
  manifest: Manifest | null;
}

/** With `parsed` (kept from one reload to the next), only the files whose bytes changed are parsed again. */
export async function rebuildLayer(serving: LayerIndex, discovery: DiscoveryMode, parsed?: ParsedFiles): Promise<Rebuilt> {
  let index: LayerIndex;
  let failed: string | null = null;
  let manifest: Manifest | null = null;
  try {
    manifest = await readManifest(join(serving.root, ...MANIFEST_PATH.split('/')));
    await verifyLocalHalf(serving.root, manifest.localPath);
    index = keepLastGood(serving, await buildIndex(serving.root, manifest, discovery, parsed));
  } catch (error) {
    failed = error instanceof MajordomusError ? `${error.code}: ${error.message}` : errorMessage(error);
    index = keepAfterFailure(serving, failed);
  }
  return { index, changed: changedUris(serving, index), failed, manifest };
}
