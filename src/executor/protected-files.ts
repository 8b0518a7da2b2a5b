/**
 * The protected files of a checkout, found by walking it (`.git` and `node_modules` skipped) and
 * asking the floor: what bash masks and what the redactor learns its values from. Scanned anew
 * for every tool run, since files change between runs.
 */
import { open } from 'node:fs/promises';
import type { Floor, FloorMatch } from './floor.js';
import { REDACT_FILE_CAP, Redactor, secretValues } from './redact.js';
import { walkFiles } from './walk.js';

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
  redactor: Redactor;
}

async function readHead(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(REDACT_FILE_CAP);
    const { bytesRead } = await handle.read(buffer, 0, REDACT_FILE_CAP, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Walks `root` for protected files and builds the redactor from their content. */
export async function scanProtected(root: string, floor: Floor): Promise<ProtectedScan> {
  const files: ProtectedFile[] = [];
  const values: string[] = [];
  for await (const entry of walkFiles(root, root)) {
    if (entry.kind !== 'file') continue;
    const match = floor.match(entry.relative);
    if (match === undefined) continue;
    files.push({ path: entry.path, relative: entry.relative, match });
    try {
      values.push(...secretValues(await readHead(entry.path)));
    } catch {
      // Unreadable to us is unreadable to bash too; it stays masked all the same.
    }
  }
  return { files, redactor: new Redactor(values) };
}
