/**
 * A snapshot of a checkout to assert "nothing was written": `git status` (untracked and ignored
 * files included), a sha256 of every tracked file's bytes (a link's target for a symbolic link),
 * and whether the local half `.ai/local` exists; and `dirState`, every entry of any directory.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from './fixture-repo.js';

export interface TreeState {
  /** `git status --porcelain`, untracked and ignored files listed one by one. */
  status: string;
  /** Tracked path → sha256 of its bytes (`missing` when deleted from the working tree). */
  tracked: Record<string, string>;
  /** Whether `<root>/.ai/local` exists (as anything). */
  localExists: boolean;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

async function digest(path: string): Promise<string> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return 'missing';
  }
  const bytes = info.isSymbolicLink() ? Buffer.from(`link:${await readlink(path)}`) : await readFile(path);
  return createHash('sha256').update(bytes).digest('hex');
}

/** Captures the state of the checkout at `root`. */
export async function treeState(root: string, localPath = '.ai/local'): Promise<TreeState> {
  const status = await git(root, ['status', '--porcelain=v1', '--untracked-files=all', '--ignored']);
  const paths = (await git(root, ['-c', 'core.quotepath=off', 'ls-files', '-z'])).split('\0').filter((p) => p !== '');
  const tracked: Record<string, string> = {};
  for (const path of paths.sort()) tracked[path] = await digest(join(root, path));
  return { status, tracked, localExists: await exists(join(root, localPath)) };
}

/** The status lines that are not below `prefix` (to ignore a directory a mode may write to). */
export function statusOutside(state: TreeState, prefix: string): string[] {
  return state.status
    .split('\n')
    .filter((line) => line !== '' && !line.slice(3).startsWith(prefix));
}

/**
 * Every entry below `root` as lstat sees it, without following a symbolic link: relative path →
 * `dir`, `link:<target>` or the sha256 of a file's bytes (`other` for a FIFO, socket or device).
 * `skip` names top-level entries left out (`.git`). For asserting "nothing was written" in a
 * directory that is not a checkout (a folder a link points to) or byte for byte in one that is.
 */
export async function dirState(root: string, skip: readonly string[] = []): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (relative: string): Promise<void> => {
    const names = (await readdir(join(root, relative))).sort();
    for (const name of names) {
      const path = relative === '' ? name : `${relative}/${name}`;
      if (relative === '' && skip.includes(name)) continue;
      const info = await lstat(join(root, path));
      if (info.isSymbolicLink()) out[path] = `link:${await readlink(join(root, path))}`;
      else if (info.isDirectory()) {
        out[path] = 'dir';
        await walk(path);
      } else if (info.isFile()) out[path] = await digest(join(root, path));
      else out[path] = 'other';
    }
  };
  await walk('');
  return out;
}
