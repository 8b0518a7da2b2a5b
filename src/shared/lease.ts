/**
 * The lease: one file through which every process of a checkout finds its shared server.
 * `<root>/<local>/state/mcp/server.json`, mode 0600. It only ever appears whole: a complete
 * temporary file is hard-linked into place, which fails when a lease is already there (one
 * winner, no reader ever sees a half-written lease). Every change happens under the lease's lock
 * (`lease-lock.ts`), so the holder's compare-and-swap (its URL, once bound) never overwrites a
 * lease another process took over, and the lease is never briefly absent. A lease is written
 * twice in its life (taken, then its URL); what changes while a server lives is kept beside it,
 * in the owner's own file (`board.json`). It is removed only by the process whose token it still
 * carries.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LeaseLockUnavailable, uniqueSuffix, withLeaseLock, withLeaseLockSync } from './lease-lock.js';

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

export async function newLeaseDocument(root: string, version: string, manifest?: string): Promise<LeaseDocument> {
  return {
    schema: LEASE_SCHEMA,
    pid: process.pid,
    // node:crypto is loaded only by a process that takes a lease (a bridge never needs it).
    token: (await import('node:crypto')).randomBytes(16).toString('hex'),
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

/** A complete copy of `doc` beside `path`, ready to be linked or renamed into place. */
async function writeTemp(path: string, doc: LeaseDocument): Promise<string> {
  const temp = `${path}.${uniqueSuffix()}.tmp`;
  try {
    await writeFile(temp, serialise(doc), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw unavailable(path, error);
  }
  return temp;
}

/** Runs a change of the lease under its lock, with the whole new document written beforehand. */
async function change<T>(path: string, doc: LeaseDocument | null, run: (temp: string) => Promise<T>): Promise<T> {
  const temp = doc === null ? '' : await writeTemp(path, doc);
  try {
    return await withLeaseLock(path, () => run(temp));
  } catch (error) {
    if (error instanceof LeaseLockUnavailable) throw new LeaseUnavailable(error.message);
    if (error instanceof LeaseUnavailable) throw error;
    throw unavailable(path, error);
  } finally {
    if (temp !== '') await unlink(temp).catch(() => undefined);
  }
}

/** Links `temp` in at `path` unless something is there (then false). Under the lock. */
async function linkIn(path: string, temp: string): Promise<boolean> {
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes what is at `path` if it still reads as `raw` (see `readLease`). Under the lock. */
async function removeIfUnchanged(path: string, raw: string): Promise<boolean> {
  const reading = await readLease(path);
  if (reading.state === 'absent' || reading.raw !== raw) return false;
  // What is not a regular file (a directory, a FIFO) was judged as it stands (raw ''); it is removed
  // without being opened.
  await rm(path, { recursive: true, force: true });
  return true;
}

/** Creates the lease exclusively (making its directory); false when one already exists. */
export async function createLease(path: string, doc: LeaseDocument): Promise<boolean> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw unavailable(dirname(path), error);
  }
  return change(path, doc, (temp) => linkIn(path, temp));
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
    // the lease path would otherwise hang the read. Synchronous calls: the file is a few hundred
    // bytes, and each asynchronous call was a round trip through the thread pool on a bridge's
    // way to answering its client's initialize.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) {
        return { state: 'corrupt', detail: info.isDirectory() ? 'a directory, not a file' : 'not a regular file', raw: '', modifiedMs: 0 };
      }
      modifiedMs = info.mtimeMs;
      raw = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
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

/** Removes the lease only if it still holds exactly `raw` (what the caller judged). */
export async function removeLeaseIfUnchanged(path: string, raw: string): Promise<boolean> {
  return change(path, null, () => removeIfUnchanged(path, raw));
}

/**
 * Rewrites our lease with `doc` (same token), only while the file still carries that token:
 * compare-and-swap under the lock, the new document renamed over the old one (never absent).
 */
export async function publishLease(path: string, doc: LeaseDocument): Promise<boolean> {
  return change(path, doc, async (temp) => {
    const current = await readLease(path);
    if (current.state !== 'document' || current.doc.token !== doc.token) return false;
    await rename(temp, path);
    return true;
  });
}

/**
 * Puts our lease back where it is gone or unreadable (deleted by `git clean -xfd`, overwritten
 * with junk): what was judged as `corruptRaw` is removed first; a lease another process created
 * meanwhile wins. Answers whether ours is in place now.
 */
export async function republishLease(path: string, doc: LeaseDocument, corruptRaw?: string): Promise<boolean> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw unavailable(dirname(path), error);
  }
  return change(path, doc, async (temp) => {
    if (corruptRaw !== undefined && !(await removeIfUnchanged(path, corruptRaw))) return false;
    return linkIn(path, temp);
  });
}

/**
 * Removes the lease if it still carries our token. Synchronous, so it can run on the way out of
 * a signal; never removes a lease another process took over.
 */
export function releaseLeaseSync(path: string, token: string): boolean {
  return withLeaseLockSync(path, () => {
    try {
      const doc = JSON.parse(readFileSync(path, 'utf8')) as Partial<LeaseDocument>;
      if (doc.token !== token) return false;
      unlinkSync(path);
      return true;
    } catch {
      return false;
    }
  });
}
