/**
 * The protected files of a checkout, found by walking it (`.git`, `node_modules` and the local half
 * skipped) and asking the floor: what bash masks and what the redactor learns its values from.
 * Scanned anew for every tool run, since files change between runs.
 *
 * The local half is not walked file by file: bash sees it as one empty directory, and its only
 * secret — the lease's token, which opens every route of the server — is learnt by reading the
 * lease. Its other files (sessions, transcripts, journals) hold nothing secret that is not already
 * out of reach, and learning their lines as "values" would redact everyday text everywhere.
 */
import { join } from 'node:path';
import { readRegular } from '../platform/confine.js';
import { walkFiles } from '../platform/walk.js';
import { LEASE_BELOW_LOCAL } from '../shared/locate.js';
import type { Floor, FloorMatch } from './rules.js';
import { REDACT_FILE_CAP, Redactor, secretValues } from './redact.js';

export interface ProtectedFile {
  /** Absolute path. */
  path: string;
  /** Relative to the root, POSIX separators. */
  relative: string;
  match: FloorMatch;
}

export interface ProtectedScan {
  /** Regular files the floor protects (symlinks are left out: their targets are judged on their own). */
  files: ProtectedFile[];
  /** The local half, to be shown empty as a whole (absolute path). */
  localDirectory: string;
  redactor: Redactor;
}

export interface ScanOptions {
  /** Values that are never secret (the task id, the session id, the working directory). */
  public?: readonly string[];
}

async function readHead(path: string): Promise<string> {
  const read = await readRegular(path, Number.MAX_SAFE_INTEGER);
  return read.ok ? read.bytes.subarray(0, REDACT_FILE_CAP).toString('utf8') : '';
}

/** The lease's token, if a lease is there: the one secret of the local half. */
async function leaseToken(root: string, floor: Floor): Promise<string[]> {
  const read = await readRegular(join(root, floor.localPath, LEASE_BELOW_LOCAL), 64 * 1024);
  if (!read.ok) return [];
  try {
    const token = (JSON.parse(read.bytes.toString('utf8')) as { token?: unknown }).token;
    return typeof token === 'string' && token !== '' ? [token] : [];
  } catch {
    return [];
  }
}

/** Walks `root` for protected files and builds the redactor from their content and the lease's token. */
export async function scanProtected(root: string, floor: Floor, options: ScanOptions = {}): Promise<ProtectedScan> {
  const files: ProtectedFile[] = [];
  const values: string[] = await leaseToken(root, floor);
  const names = new Set<string>(options.public ?? []);
  for await (const entry of walkFiles(root, root, { skip: (relative) => floor.isLocal(relative) })) {
    names.add(entry.relative);
    names.add(entry.relative.slice(entry.relative.lastIndexOf('/') + 1));
    if (entry.kind !== 'file') continue;
    const match = floor.match(entry.relative);
    if (match === undefined) continue;
    files.push({ path: entry.path, relative: entry.relative, match });
    values.push(...secretValues(await readHead(entry.path)));
  }
  return { files, localDirectory: join(root, floor.localPath), redactor: new Redactor(values, { public: names, root }) };
}
