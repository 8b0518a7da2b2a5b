/**
 * Which files under the repo half of the layer are candidates. `vcs` asks git for the tracked
 * files (what a clone would serve); `filesystem` walks the directory. Neither follows a symbolic
 * link: git lists a link as one entry, the walk never descends into one, and a link on the way to
 * the repo half empties the layer. Both leave out the local half and `.git`. Names are read as
 * bytes: one that is not UTF-8 cannot be named in a path or a URI, so it is set apart, never
 * turned into a look-alike path that points nowhere. Nothing here reads a file's content.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MajordomusError } from '../platform/errors.js';
import { GitFailed, runGitBytes } from '../platform/git.js';
import { log } from '../platform/log.js';
import { RealDirectories } from '../platform/confine.js';
import type { Diagnostic, DiscoveryMode } from './types.js';

/** Bound on `git ls-files` output: far above any real layer, small enough to never exhaust memory. */
const GIT_MAX_BUFFER = 64 * 1024 * 1024;
const WALK_CONCURRENCY = 16;

/** A name below the repo half that is not UTF-8, shown with U+FFFD where its bytes do not decode. */
export interface Undecodable {
  path: string;
  /** A directory the walk did not enter (vcs lists files only). */
  directory: boolean;
}

/** What discovery found: candidate paths (relative to the root, `/` separators, sorted) and problems. */
export interface Discovered {
  paths: string[];
  diagnostics: Diagnostic[];
  /** Sorted by path; outside the local half. */
  undecodable: Undecodable[];
}

export interface DiscoveryInput {
  /** Absolute real path of the root. */
  root: string;
  /** The repo half, relative to the root. */
  repoPath: string;
  /** The local half, relative to the root; never served. */
  localPath: string;
  mode: DiscoveryMode;
  /** The directory verdicts of this root, shared with whoever reads the files; made here if absent. */
  directories?: RealDirectories;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** The name as text, or undefined when its bytes are not UTF-8. */
function decodeName(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function isUnder(path: string, directory: string): boolean {
  return path === directory || path.startsWith(`${directory}/`);
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Lists the candidate files of the repo half. */
export async function discover(input: DiscoveryInput): Promise<Discovered> {
  const diagnostics: Diagnostic[] = [];
  // The repo half and every directory on the way to it must be real directories: a link there
  // would serve files from elsewhere.
  const verdict = await (input.directories ?? new RealDirectories(input.root)).check(input.repoPath);
  if (verdict.kind === 'symlink') {
    const what = verdict.component === input.repoPath ? 'the repo half' : `a directory on the way to the repo half ${input.repoPath}`;
    diagnostics.push({
      severity: 'error',
      code: 'symlink',
      path: verdict.component,
      message: `${verdict.component}, ${what}, is a symbolic link to ${verdict.target}; links are never followed, so the layer is empty`,
    });
    return { paths: [], diagnostics, undecodable: [] };
  }
  if (verdict.kind !== 'real') {
    // Absent: an empty layer in both modes; say so, since nothing else will.
    const why = verdict.kind === 'unknown' ? verdict.code : `${verdict.component} is ${verdict.what}`;
    log.warn(`${input.repoPath} cannot be inspected below ${input.root} (${why}); it serves no objects`);
  }

  const listed = input.mode === 'vcs' ? await listTracked(input) : await walk(input, diagnostics);
  const kept = (path: string): boolean => isUnder(path, input.repoPath) && !isUnder(path, input.localPath);
  return {
    paths: listed.paths.filter(kept).sort(byCodeUnits),
    diagnostics,
    undecodable: listed.undecodable.filter((entry) => kept(entry.path)).sort((a, b) => byCodeUnits(a.path, b.path)),
  };
}

interface Listing {
  paths: string[];
  undecodable: Undecodable[];
}

async function listTracked(input: DiscoveryInput): Promise<Listing> {
  const args = ['-c', 'core.quotepath=off', '--literal-pathspecs', 'ls-files', '-z', '--cached', '--', input.repoPath];
  let stdout: Buffer;
  try {
    // Reading the index never takes a lock or refreshes it (src/platform/git.ts): nothing is written, in any mode.
    stdout = await runGitBytes(input.root, args, { maxBytes: GIT_MAX_BUFFER });
  } catch (error) {
    const why = error instanceof GitFailed ? error.why : String(error);
    throw new MajordomusError(
      'MAJ_GIT_UNAVAILABLE',
      `--discovery vcs cannot list the tracked files of ${input.root}: ${why} (use --discovery filesystem to walk the directory instead)`,
      { cause: error },
    );
  }
  const listing: Listing = { paths: [], undecodable: [] };
  for (let start = 0; start < stdout.length; ) {
    let end = stdout.indexOf(0, start);
    if (end === -1) end = stdout.length;
    const bytes = stdout.subarray(start, end);
    start = end + 1;
    if (bytes.length === 0) continue;
    const path = decodeName(bytes);
    if (path === undefined) listing.undecodable.push({ path: lossyUtf8.decode(bytes), directory: false });
    else listing.paths.push(path);
  }
  return listing;
}

async function walk(input: DiscoveryInput, diagnostics: Diagnostic[]): Promise<Listing> {
  const files: string[] = [];
  const undecodable: Undecodable[] = [];
  let pending = [input.repoPath];
  while (pending.length > 0) {
    const next: string[] = [];
    for (let start = 0; start < pending.length; start += WALK_CONCURRENCY) {
      const batch = pending.slice(start, start + WALK_CONCURRENCY);
      await Promise.all(
        batch.map(async (directory) => {
          let entries;
          try {
            entries = await readdir(join(input.root, directory), { withFileTypes: true, encoding: 'buffer' });
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (directory === input.repoPath && code === 'ENOENT') return;
            diagnostics.push({
              severity: 'error',
              code: 'unreadable',
              path: directory,
              message: `cannot list the directory ${directory}: ${code ?? String(error)}; files below it are not served`,
            });
            return;
          }
          for (const entry of entries) {
            const name = decodeName(entry.name);
            if (name === undefined) {
              undecodable.push({ path: `${directory}/${lossyUtf8.decode(entry.name)}`, directory: entry.isDirectory() });
              continue;
            }
            if (name === '.git') continue;
            const path = `${directory}/${name}`;
            if (isUnder(path, input.localPath)) continue;
            // Dirent types come from lstat semantics: a link to a directory is not a directory here.
            if (entry.isDirectory()) next.push(path);
            else files.push(path);
          }
        }),
      );
    }
    pending = next;
  }
  return { paths: files, undecodable };
}
