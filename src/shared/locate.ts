/**
 * Finds the root and its lease without loading the layer: the root search, the manifest's
 * `local.path` (read with a YAML parser, never validated here — the owner validates the whole
 * manifest when it loads the layer) and the repository id the probe compares.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_LOCAL_PATH, repositoryId } from '../layer/identity.js';
import { findRoot } from '../layer/root.js';

export interface Checkout {
  /** Real path of the root. */
  root: string;
  repositoryId: string;
  leasePath: string;
}

export const LEASE_BELOW_LOCAL = 'state/mcp/server.json';

async function localPath(manifestPath: string): Promise<string> {
  try {
    const manifest = parse(await readFile(manifestPath, 'utf8')) as { local?: { path?: unknown } } | null;
    const path = manifest?.local?.path;
    return typeof path === 'string' && path.length > 0 ? path : DEFAULT_LOCAL_PATH;
  } catch {
    return DEFAULT_LOCAL_PATH; // A broken manifest is reported by whoever loads the layer.
  }
}

export async function locateCheckout(start: string): Promise<Checkout> {
  const found = await findRoot(start);
  const root = await realpath(found.root);
  return {
    root,
    repositoryId: repositoryId(root),
    leasePath: join(root, await localPath(found.manifestPath), LEASE_BELOW_LOCAL),
  };
}
