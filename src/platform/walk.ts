/**
 * One walk of a directory tree, shared by glob, grep and the floor's scan of protected files.
 * Symlinks are reported, never followed (a link to a directory outside the root must not pull
 * that directory in); `.git` and `node_modules` are skipped unless the walk starts inside them.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Directories a walk does not descend into. */
export const SKIPPED_DIRECTORIES: readonly string[] = ['.git', 'node_modules'];

export interface WalkEntry {
  /** Absolute path. */
  path: string;
  /** Path relative to the root, POSIX separators. */
  relative: string;
  kind: 'file' | 'symlink';
}

/** Converts a platform path to the POSIX form the matchers take. */
export function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

export interface WalkOptions {
  signal?: AbortSignal;
  /** A directory (relative to the root) the walk does not enter. */
  skip?: (relative: string) => boolean;
}

/**
 * Every file and symlink under `start` (a directory), depth first in name order. `root` only
 * names what `relative` is relative to. Unreadable directories are passed over silently.
 */
export async function* walkFiles(root: string, start: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const { signal, skip } = options;
  const stack: string[] = [start];
  while (stack.length > 0) {
    if (signal?.aborted) return;
    const directory = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirectories: string[] = [];
    for (const entry of entries) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.includes(entry.name) && !skip?.(toPosix(relative(root, path)))) subdirectories.push(path);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        yield { path, relative: toPosix(relative(root, path)), kind: entry.isFile() ? 'file' : 'symlink' };
      }
    }
    // Reversed so the stack pops them in name order.
    stack.push(...subdirectories.reverse());
  }
}
