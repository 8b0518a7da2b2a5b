/**
 * Finds the root and its lease without loading the layer: the root search and the manifest (the
 * whole of it validated before any path is derived from it — a lease path taken from an
 * unchecked `local.path` could point outside the checkout, into `.git` or into the tracked tree).
 *
 * A bridge must start fast, and parsing YAML is most of what it would load. So a server records
 * in its lease the exact `lstat` of the manifest it validated; a later process that finds that
 * lease at the default place, with the manifest unchanged, takes the validation as done.
 */
// Synchronous: a bridge's start makes these few calls in a row, and each asynchronous one was a
// round trip through the thread pool (started for it) before the client got its answer.
import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LOCAL_PATH } from '../layer/identity.js';
import { findRoot } from '../layer/root.js';
import { readLease } from './lease.js';

export interface Checkout {
  /** Real path of the root. */
  root: string;
  /** The manifest's validated `local.path`: relative to the root, `/` separators. */
  localPath: string;
  leasePath: string;
  /** The manifest as `lstat` saw it before it was read (see `LeaseDocument.manifest`). */
  manifestFingerprint: string;
}

export const LEASE_BELOW_LOCAL = 'state/mcp/server.json';

/** `dev:ino:size:mtimeNs:ctimeNs` of the manifest (not following a link), or null. */
function fingerprintOf(manifestPath: string): string | null {
  try {
    const info = lstatSync(manifestPath, { bigint: true });
    return [info.dev, info.ino, info.size, info.mtimeNs, info.ctimeNs].join(':');
  } catch {
    return null;
  }
}

/** Whether the lease at the default place names this manifest, unchanged, as validated. */
async function validatedBefore(root: string, fingerprint: string): Promise<boolean> {
  // readLease never opens what is not a regular file (a FIFO there must not hang a bridge).
  const reading = await readLease(join(root, DEFAULT_LOCAL_PATH, LEASE_BELOW_LOCAL)).catch(() => null);
  return reading?.state === 'document' && reading.doc.manifest === fingerprint && reading.doc.root === root;
}

/** Finds the checkout from `start`; an invalid manifest is MAJ_MANIFEST_INVALID, before anything is written. */
export async function locateCheckout(start: string): Promise<Checkout> {
  const found = await findRoot(start);
  const root = realpathSync(found.root);
  const fingerprint = fingerprintOf(found.manifestPath) ?? '';
  const checkout = (localPath: string): Checkout => ({
    root,
    localPath,
    leasePath: join(root, localPath, LEASE_BELOW_LOCAL),
    manifestFingerprint: fingerprint,
  });
  if (fingerprint !== '' && (await validatedBefore(root, fingerprint))) return checkout(DEFAULT_LOCAL_PATH);
  // The one validator of the manifest, loaded on demand: it brings the YAML parser, which a
  // bridge never needs otherwise (the layering test keeps the static imports of this path light).
  const { readManifest } = await import('../layer/manifest.js');
  return checkout((await readManifest(found.manifestPath)).localPath);
}
