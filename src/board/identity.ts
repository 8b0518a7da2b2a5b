/**
 * Who shares a board: the repository (its git common directory on one machine; on a broker, its
 * root commit unless the manifest names it) and each checkout in it (this machine's host name and
 * the checkout's real path, hashed: two clones on one host are two checkouts, as two hosts are).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, isAbsolute, resolve } from 'node:path';
import { runGit } from '../platform/git.js';
import type { CheckoutPlace } from '../peers/schema.js';

export interface CheckoutIdentity {
  /** 16 hex digits: the host and the checkout's real path. */
  id: string;
  /** The short name the other checkouts see its peers under (`p3@<label>`): its folder and a hash. */
  label: string;
  place: CheckoutPlace;
}

/** This checkout's identity; `root` is its real path. */
export async function checkoutIdentity(root: string): Promise<CheckoutIdentity> {
  const host = hostname();
  const id = createHash('sha256').update(`${host}\0${root}`).digest('hex').slice(0, 16);
  const folder = basename(root).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 16) || 'checkout';
  const label = `${folder}-${id.slice(0, 4)}`;
  return { id, label, place: { checkout: label, branch: await branchOf(root), host: host.slice(0, 255) } };
}

/** The branch checked out, or null (a detached head, or not a git checkout). */
async function branchOf(root: string): Promise<string | null> {
  const name = await runGit(root, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { timeoutMs: 5_000 }).catch(() => '');
  return name.trim().slice(0, 256) || null;
}

/** git's common directory (shared by every worktree of the repository), or null outside git. */
export async function gitCommonDir(root: string): Promise<string | null> {
  const out = await runGit(root, ['rev-parse', '--git-common-dir'], { timeoutMs: 5_000 }).catch(() => null);
  const dir = out?.trim();
  if (!dir) return null;
  return isAbsolute(dir) ? dir : resolve(root, dir);
}

/**
 * The repository's name on a broker: the manifest's, else its root commit (the first of several,
 * sorted, so every clone picks the same); null when it has no commit yet.
 */
export async function repositoryName(root: string, configured: string | null): Promise<string | null> {
  if (configured !== null) return configured;
  const out = await runGit(root, ['rev-list', '--max-parents=0', 'HEAD'], { timeoutMs: 10_000 }).catch(() => '');
  const roots = out.split('\n').map((line) => line.trim()).filter((line) => /^[0-9a-f]{40,64}$/.test(line)).sort();
  return roots[0] ?? null;
}
