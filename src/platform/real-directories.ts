/**
 * Whether every directory between the root and a path is a real directory. O_NOFOLLOW guards
 * only the last component of a path: a link anywhere above it (`knowledge/linkdir -> /elsewhere`,
 * `sub -> /outside` on the way to `repo.path`) would make the layer read, or the lease be written,
 * outside the checkout. Each directory is looked at once (lstat) and its verdict remembered, so
 * thousands of files in a few directories cost a few calls. Free of heavy imports: the bridge
 * path checks the local half with it.
 */
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** What stands on the way to a path; `component` is the first directory that is not real. */
export type DirectoryVerdict =
  | { kind: 'real' }
  /** Absent, or cannot be inspected (`code`): whoever opens the path below reports it. */
  | { kind: 'unknown'; component: string; code: string }
  | { kind: 'symlink'; component: string; target: string }
  | { kind: 'not_directory'; component: string; what: string };

const REAL: DirectoryVerdict = { kind: 'real' };

function describe(info: { isFile(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (info.isFile()) return 'a regular file';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'a device';
}

/** The verdicts for one root, remembered per directory for the life of the object. */
export class RealDirectories {
  readonly #root: string;
  readonly #verdicts = new Map<string, Promise<DirectoryVerdict>>();

  /** `root` is trusted as it is (a real path when links in its own ancestry must not matter). */
  constructor(root: string) {
    this.#root = root;
  }

  /**
   * The verdict on `directory` itself and every directory above it up to the root. Paths are
   * relative to the root, `/`-separated and normalised; `''` is the root.
   */
  check(directory: string): Promise<DirectoryVerdict> {
    if (directory === '' || directory === '.') return Promise.resolve(REAL);
    let verdict = this.#verdicts.get(directory);
    if (verdict === undefined) {
      verdict = this.#judge(directory);
      this.#verdicts.set(directory, verdict);
    }
    return verdict;
  }

  /** The verdict on the directories that hold `path` (not on `path` itself). */
  parentsOf(path: string): Promise<DirectoryVerdict> {
    const slash = path.lastIndexOf('/');
    return this.check(slash < 0 ? '' : path.slice(0, slash));
  }

  async #judge(directory: string): Promise<DirectoryVerdict> {
    const above = await this.parentsOf(directory);
    if (above.kind !== 'real') return above;
    const absolute = join(this.#root, directory);
    let info;
    try {
      info = await lstat(absolute);
    } catch (error) {
      return { kind: 'unknown', component: directory, code: (error as NodeJS.ErrnoException).code ?? String(error) };
    }
    if (info.isSymbolicLink()) {
      return { kind: 'symlink', component: directory, target: await readlink(absolute).catch(() => '?') };
    }
    if (!info.isDirectory()) return { kind: 'not_directory', component: directory, what: describe(info) };
    return REAL;
  }
}
