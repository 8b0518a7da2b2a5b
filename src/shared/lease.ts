/**
 * The lease: one file through which every process of a checkout finds its shared server.
 * `<root>/<local>/state/mcp/server.json`, mode 0600. It only ever appears whole: a complete
 * temporary file is hard-linked into place, which fails when a lease is already there (one
 * winner, no reader ever sees a half-written lease). The holder rewrites it (its URL once bound,
 * the peers it issued) by compare-and-swap — move the file aside, check it is still its own,
 * link the new one in — so a lease another process took over is never overwritten. A lease is
 * written twice in its life (taken, then its URL once bound); what changes while a server lives
 * is kept beside it, in the owner's own file (`board.json`). It is removed only by the process
 * whose token it still carries.
 */
import { randomBytes } from 'node:crypto';
import { constants, linkSync, readFileSync, unlinkSync } from 'node:fs';
import { link, lstat, mkdir, open, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export const LEASE_SCHEMA = 'majordomus-mcp-lease/v1';

export interface LeaseDocument {
  schema: typeof LEASE_SCHEMA;
  pid: number;
  token: string;
  root: string;
  url: string | null;
  started_at: string;
  version: string;
  /**
   * The manifest this server validated, as `lstat` saw it (`dev:ino:size:mtimeNs:ctimeNs`). A
   * later process whose manifest still looks exactly so trusts the validation and finds the lease
   * without parsing YAML (a bridge's cold start); any edit to the manifest changes it.
   */
  manifest?: string;
}

/** The lease cannot be created or replaced at all (unwritable directory, read-only file system…). */
export class LeaseUnavailable extends Error {
  override name = 'LeaseUnavailable';
}

export function newLeaseDocument(root: string, version: string, manifest?: string): LeaseDocument {
  return {
    schema: LEASE_SCHEMA,
    pid: process.pid,
    token: randomBytes(16).toString('hex'),
    root,
    url: null,
    started_at: new Date().toISOString(),
    version,
    ...(manifest === undefined ? {} : { manifest }),
  };
}

function serialise(doc: LeaseDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function unavailable(path: string, error: unknown): LeaseUnavailable {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return new LeaseUnavailable(`cannot write the lease ${path} (${code || String(error)})`);
}

/** Puts `doc` at `path` whole, unless a file is already there (then false). */
async function linkInPlace(path: string, doc: LeaseDocument): Promise<boolean> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, serialise(doc), { mode: 0o600, flag: 'wx' });
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw unavailable(path, error);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Creates the lease exclusively (making its directory); false when one already exists. */
export async function createLease(path: string, doc: LeaseDocument): Promise<boolean> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw unavailable(dirname(path), error);
  }
  return linkInPlace(path, doc);
}

/** What a lease file holds right now; `raw` is compared before anything replaces it. */
export type LeaseReading =
  | { state: 'absent' }
  | { state: 'document'; doc: LeaseDocument; raw: string; modifiedMs: number }
  | { state: 'corrupt'; detail: string; raw: string; modifiedMs: number }
  | { state: 'empty'; raw: ''; modifiedMs: number };

export async function readLease(path: string): Promise<LeaseReading> {
  let raw: string;
  let modifiedMs: number;
  try {
    // Opened without following a link and without blocking, then checked: a FIFO planted at
    // the lease path would otherwise hang the read.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        return { state: 'corrupt', detail: info.isDirectory() ? 'a directory, not a file' : 'not a regular file', raw: '', modifiedMs: 0 };
      }
      modifiedMs = info.mtimeMs;
      raw = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'absent' };
    if (code === 'ELOOP') return { state: 'corrupt', detail: 'a symbolic link, not a file', raw: '', modifiedMs: 0 };
    throw unavailable(path, error);
  }
  if (raw.length === 0) return { state: 'empty', raw: '', modifiedMs };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { state: 'corrupt', detail: 'not JSON', raw, modifiedMs };
  }
  const doc = value as Partial<LeaseDocument> | null;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { state: 'corrupt', detail: 'not a JSON object', raw, modifiedMs };
  if (doc.schema !== LEASE_SCHEMA) {
    return { state: 'corrupt', detail: `schema ${JSON.stringify(doc.schema ?? null)}, not ${LEASE_SCHEMA}`, raw, modifiedMs };
  }
  if (typeof doc.token !== 'string' || typeof doc.pid !== 'number' || (doc.url !== null && typeof doc.url !== 'string')) {
    return { state: 'corrupt', detail: 'missing token, pid or url', raw, modifiedMs };
  }
  return { state: 'document', doc: doc as LeaseDocument, raw, modifiedMs };
}

/**
 * Removes the lease only if it still holds exactly `raw`: the file is first moved aside (atomic),
 * then compared; a file that changed in between (another process's fresh lease) is put back.
 * Answers whether the file we judged was removed.
 */
export async function removeLeaseIfUnchanged(path: string, raw: string): Promise<boolean> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.replaced`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw unavailable(path, error);
  }
  const discard = (): Promise<void> => rm(aside, { recursive: true, force: true }).catch(() => undefined);
  // What is not a regular file (a directory, a FIFO) was judged corrupt as it stands (raw '');
  // it is never opened.
  const isFile = await lstat(aside).then((s) => s.isFile(), () => false);
  const moved = isFile ? await readFile(aside, 'utf8').catch(() => null) : '';
  if (moved === raw) {
    await discard();
    return true;
  }
  // Not the file we judged: restore it unless a newer one has taken its place meanwhile.
  try {
    linkSync(aside, path);
  } catch {
    // A newer lease exists; the one we moved lost anyway.
  }
  await discard();
  return false;
}

/**
 * Rewrites our lease with `doc` (same token), only while the file still carries that token:
 * compare-and-swap by moving the file aside, checking it, then linking the new one in. A lease
 * another process put there meanwhile is put back untouched and the answer is false.
 */
export async function publishLease(path: string, doc: LeaseDocument): Promise<boolean> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.publishing`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw unavailable(path, error);
  }
  let ours = false;
  try {
    const moved = JSON.parse(await readFile(aside, 'utf8')) as Partial<LeaseDocument>;
    ours = moved.token === doc.token;
  } catch {
    ours = false;
  }
  if (!ours) {
    // Not ours: put it back unless a newer lease has taken its place meanwhile.
    await link(aside, path).catch(() => undefined);
    await rm(aside, { force: true }).catch(() => undefined);
    return false;
  }
  await rm(aside, { force: true }).catch(() => undefined);
  // Absent for an instant: a process electing right now may create its own lease first, which
  // then wins (we lose the lease rather than overwrite theirs).
  return linkInPlace(path, doc);
}

/**
 * Puts our lease back where it is gone or unreadable (deleted by `git clean -xfd`, overwritten
 * with junk): the corrupt file judged as `raw` is moved away first; a lease that another process
 * created meanwhile wins. Answers whether ours is in place now.
 */
export async function republishLease(path: string, doc: LeaseDocument, corruptRaw?: string): Promise<boolean> {
  if (corruptRaw !== undefined && !(await removeLeaseIfUnchanged(path, corruptRaw))) return false;
  return createLease(path, doc);
}

/**
 * Removes the lease if it still carries our token. Synchronous, so it can run on the way out of
 * a signal; never removes a lease another process took over.
 */
export function releaseLeaseSync(path: string, token: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as Partial<LeaseDocument>;
    if (doc.token !== token) return false;
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
