/**
 * Which files under the repo half of the layer are candidates. `vcs` asks git for the tracked
 * files (what a clone would serve); `filesystem` walks the directory. Neither follows a symbolic
 * link: git lists a link as one entry, and the walk never descends into one. Both leave out the
 * local half and `.git`. Nothing here reads a file's content.
 */
import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MajordomusError } from '../errors.js';
import { log } from '../log.js';
import type { Diagnostic, DiscoveryMode } from './types.js';

const execFileAsync = promisify(execFile);

/** Bound on `git ls-files` output: far above any real layer, small enough to never exhaust memory. */
const GIT_MAX_BUFFER = 64 * 1024 * 1024;
const WALK_CONCURRENCY = 16;

/** What discovery found: candidate paths (relative to the root, `/` separators, sorted) and problems. */
export interface Discovered {
  paths: string[];
  diagnostics: Diagnostic[];
}

export interface DiscoveryInput {
  /** Absolute real path of the root. */
  root: string;
  /** The repo half, relative to the root. */
  repoPath: string;
  /** The local half, relative to the root; never served. */
  localPath: string;
  mode: DiscoveryMode;
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
  // The repo half itself must be a real directory: a link there would serve files from elsewhere.
  try {
    const info = await lstat(join(input.root, input.repoPath));
    if (info.isSymbolicLink()) {
      diagnostics.push({
        severity: 'error',
        code: 'symlink',
        path: input.repoPath,
        message: `${input.repoPath} is a symbolic link; links are never followed, so the layer is empty`,
      });
      return { paths: [], diagnostics };
    }
  } catch (error) {
    // Absent: an empty layer in both modes; say so, since nothing else will.
    const code = (error as NodeJS.ErrnoException).code;
    log.warn(`${input.repoPath} cannot be inspected below ${input.root} (${code ?? String(error)}); it serves no objects`);
  }

  const listed = input.mode === 'vcs' ? await listTracked(input) : await walk(input, diagnostics);
  const paths = listed.filter((path) => isUnder(path, input.repoPath) && !isUnder(path, input.localPath)).sort(byCodeUnits);
  return { paths, diagnostics };
}

async function listTracked(input: DiscoveryInput): Promise<string[]> {
  const args = ['-c', 'core.quotepath=off', '--literal-pathspecs', 'ls-files', '-z', '--cached', '--', input.repoPath];
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('git', args, {
      cwd: input.root,
      maxBuffer: GIT_MAX_BUFFER,
      encoding: 'utf8',
      // Reading the index must never take a lock or refresh it: nothing is written, in any mode.
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
      windowsHide: true,
    }));
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    const why =
      failure.code === 'ENOENT'
        ? 'git is not installed or not on PATH'
        : (failure.stderr ?? '').trim() || failure.message;
    throw new MajordomusError(
      'MAJ_GIT_UNAVAILABLE',
      `--discovery vcs cannot list the tracked files of ${input.root}: ${why} (use --discovery filesystem to walk the directory instead)`,
      { cause: error },
    );
  }
  return stdout.split('\0').filter((path) => path !== '');
}

async function walk(input: DiscoveryInput, diagnostics: Diagnostic[]): Promise<string[]> {
  const files: string[] = [];
  let pending = [input.repoPath];
  while (pending.length > 0) {
    const next: string[] = [];
    for (let start = 0; start < pending.length; start += WALK_CONCURRENCY) {
      const batch = pending.slice(start, start + WALK_CONCURRENCY);
      await Promise.all(
        batch.map(async (directory) => {
          let entries;
          try {
            entries = await readdir(join(input.root, directory), { withFileTypes: true });
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
            if (entry.name === '.git') continue;
            const path = `${directory}/${entry.name}`;
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
  return files;
}
