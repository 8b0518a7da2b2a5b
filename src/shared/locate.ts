/**
 * Finds the root and its lease without loading the layer: the root search, the manifest (the
 * whole of it validated before any path is derived from it — a lease path taken from an
 * unchecked `local.path` could point outside the checkout, into `.git` or into the tracked tree)
 * and the repository id the probe compares.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryId } from '../layer/identity.js';
import { findRoot } from '../layer/root.js';

export interface Checkout {
  /** Real path of the root. */
  root: string;
  repositoryId: string;
  /** The manifest's validated `local.path`: relative to the root, `/` separators. */
  localPath: string;
  leasePath: string;
}

export const LEASE_BELOW_LOCAL = 'state/mcp/server.json';

/** Finds the checkout from `start`; an invalid manifest is MAJ_MANIFEST_INVALID, before anything is written. */
export async function locateCheckout(start: string): Promise<Checkout> {
  const found = await findRoot(start);
  // The one validator of the manifest, loaded on demand: it brings zod, which a bridge never
  // needs otherwise (the layering test keeps the static imports of this path light).
  const { readManifest } = await import('../layer/manifest.js');
  const manifest = await readManifest(found.manifestPath);
  const root = await realpath(found.root);
  return {
    root,
    repositoryId: repositoryId(root),
    localPath: manifest.localPath,
    leasePath: join(root, manifest.localPath, LEASE_BELOW_LOCAL),
  };
}
