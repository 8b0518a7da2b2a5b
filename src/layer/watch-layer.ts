/**
 * What to watch of a serving layer: its halves as the manifest says now. The server validated the
 * manifest at start; if it broke since, the defaults are watched and the first build reports it.
 */
import { join } from 'node:path';
import { DEFAULT_LOCAL_PATH, MANIFEST_PATH } from './identity.js';
import { DEFAULT_REPO_PATH, readManifest } from './manifest.js';
import type { DiscoveryMode } from './types.js';
import { gitWatchFiles, layerTrees, LayerWatcher } from './watch.js';

/** `localPath`: the local half the server writes to, when the caller knows it (else the manifest's). */
export async function watchLayer(root: string, discovery: DiscoveryMode, localPath: string | null, onChange: () => void): Promise<LayerWatcher> {
  const manifest = await readManifest(join(root, ...MANIFEST_PATH.split('/'))).catch(() => null);
  return LayerWatcher.start(
    {
      root,
      trees: layerTrees(manifest?.repoPath ?? DEFAULT_REPO_PATH),
      localPath: localPath ?? manifest?.localPath ?? DEFAULT_LOCAL_PATH,
      files: discovery === 'vcs' ? await gitWatchFiles(root) : [],
    },
    onChange,
  );
}
