/**
 * The lease: one file through which every process of a checkout finds its shared server.
 * `<root>/<local>/state/mcp/server.json`, mode 0600. Created with an exclusive create (one
 * winner), its URL published by write-temp + rename once bound, and removed only by the process
 * whose token it still carries.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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
   * The highest peer number this server has issued. A process taking the lease over continues
   * after it, so a bridge that re-attaches finds its old peer id still free.
   */
  peers_issued?: number;
}

/** The lease cannot be created or replaced at all (unwritable directory, read-only file system…). */
export class LeaseUnavailable extends Error {
  override name = 'LeaseUnavailable';
}

export function newLeaseDocument(root: string, version: string): LeaseDocument {
  return {
    schema: LEASE_SCHEMA,
    pid: process.pid,
    token: randomBytes(16).toString('hex'),
    root,
    url: null,
    started_at: new Date().toISOString(),
    version,
  };
}

function serialise(doc: LeaseDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function unavailable(path: string, error: unknown): LeaseUnavailable {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return new LeaseUnavailable(`cannot write the lease ${path} (${code || String(error)})`);
}

/** Creates the lease exclusively; false when one already exists. */
export async function createLease(path: string, doc: LeaseDocument): Promise<boolean> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw unavailable(dirname(path), error);
  }
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw unavailable(path, error);
  }
  try {
    await handle.writeFile(serialise(doc));
  } finally {
    await handle.close();
  }
  return true;
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
    [raw, modifiedMs] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mtimeMs)]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'absent' };
    if (code === 'EISDIR') return { state: 'corrupt', detail: 'a directory, not a file', raw: '', modifiedMs: 0 };
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
  // A directory where the lease belongs was judged corrupt as it stands (raw ''); nothing races it.
  const isDirectory = await lstat(aside).then((s) => s.isDirectory(), () => false);
  const moved = isDirectory ? '' : await readFile(aside, 'utf8').catch(() => null);
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

/** Publishes the bound URL by write-temp + rename, only while the lease is still ours. */
export async function publishLease(path: string, doc: LeaseDocument): Promise<boolean> {
  const current = await readLease(path);
  if (current.state !== 'document' || current.doc.token !== doc.token) return false;
  const temp = `${path}.${doc.token}.tmp`;
  await writeFile(temp, serialise(doc), { mode: 0o600 });
  await rename(temp, path);
  return true;
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
