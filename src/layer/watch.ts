/**
 * Watches what a layer is built from: the `.ai/` directory (and the repo half, where the manifest
 * puts it elsewhere), never the local half — the server writes its lease, journals and transcripts
 * there all the time, and a write there must not rebuild anything — and, under `--discovery vcs`,
 * git's index and HEAD (the tracked set changes with `git add`, `checkout`, `reset`).
 *
 * One `fs.watch` per directory (docs/DECISIONS.md says why not the recursive mode of Node 20 on
 * Linux, nor chokidar): a directory that appears is watched too, one that goes is forgotten; links
 * are never followed. Every event calls `onChange` with the path relative to the root; what to do
 * about a burst of them is the caller's (src/layer/rebuild-scheduler.ts). The watches keep their
 * thread alive (the build worker has nothing else to): `close()` ends them.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { runGit } from '../platform/git.js';

export interface WatchTargets {
  /** Real path of the root. */
  root: string;
  /** Directories (relative to the root, `/` separators) watched with everything below them. */
  trees: readonly string[];
  /** The local half (relative to the root): nothing below it is watched or reported. */
  localPath: string;
  /** Absolute paths of single files watched through their directory (git's index and HEAD). */
  files: readonly string[];
}

/** The trees a layer's manifest asks to watch: `.ai/`, and the repo half when it lies outside it. */
export function layerTrees(repoPath: string): string[] {
  return repoPath === '.ai' || repoPath.startsWith('.ai/') ? ['.ai'] : ['.ai', repoPath];
}

/**
 * git's index and HEAD for the work tree at `root` (a linked worktree's own), absolute; none when
 * git cannot say (the build then reports git's problem).
 */
export async function gitWatchFiles(root: string): Promise<string[]> {
  try {
    const stdout = await runGit(root, ['rev-parse', '--path-format=absolute', '--git-path', 'index', '--git-path', 'HEAD'], { timeoutMs: 10_000, maxBytes: 64 * 1024 });
    return stdout.split('\n').filter((line) => line !== '');
  } catch {
    return [];
  }
}

export class LayerWatcher {
  readonly #targets: WatchTargets;
  readonly #onChange: (path: string) => void;
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #local: string;
  #closed = false;

  private constructor(targets: WatchTargets, onChange: (path: string) => void) {
    this.#targets = targets;
    this.#onChange = onChange;
    this.#local = join(targets.root, ...targets.localPath.split('/'));
  }

  /** Starts watching; resolves once every existing directory is watched. */
  static async start(targets: WatchTargets, onChange: (path: string) => void): Promise<LayerWatcher> {
    const watcher = new LayerWatcher(targets, onChange);
    for (const tree of targets.trees) await watcher.#watchTree(join(targets.root, ...tree.split('/')));
    watcher.#watchFiles();
    return watcher;
  }

  /** How many directories are watched (tests). */
  get directories(): number {
    return this.#watchers.size;
  }

  close(): void {
    this.#closed = true;
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #ignored(path: string): boolean {
    return path === this.#local || path.startsWith(this.#local + sep) || basename(path) === '.git';
  }

  #report(path: string): void {
    if (!this.#closed) this.#onChange(relative(this.#targets.root, path).split(sep).join('/'));
  }

  async #watchTree(directory: string): Promise<void> {
    if (this.#closed || this.#watchers.has(directory) || this.#ignored(directory)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(directory, { persistent: true }, (event, name) => this.#onEvent(directory, event, name));
    } catch {
      return; // gone already, or not a directory: its parent's event reported it
    }
    watcher.on('error', () => this.#forget(directory));
    this.#watchers.set(directory, watcher);
    let entries;
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      // A link is never followed (the build does not either).
      if (entry.isDirectory()) await this.#watchTree(join(directory, entry.name));
    }
  }

  #onEvent(directory: string, event: string, name: string | null): void {
    const path = name === null ? directory : join(directory, name);
    if (this.#ignored(path)) return;
    this.#report(path);
    if (event === 'rename' && name !== null) void this.#follow(path);
  }

  /** A name appeared or went: watch a new directory (and report it once watched), forget a gone one. */
  async #follow(path: string): Promise<void> {
    const info = await lstat(path).catch(() => null);
    if (info?.isDirectory()) {
      if (this.#watchers.has(path)) return;
      await this.#watchTree(path);
      // Files written into it before its watch began are found by the build this triggers.
      this.#report(path);
    } else {
      this.#forget(path);
    }
  }

  #forget(directory: string): void {
    for (const [path, watcher] of this.#watchers) {
      if (path === directory || path.startsWith(directory + sep)) {
        watcher.close();
        this.#watchers.delete(path);
      }
    }
  }

  #watchFiles(): void {
    const byDirectory = new Map<string, Set<string>>();
    for (const file of this.#targets.files) {
      const names = byDirectory.get(dirname(file)) ?? new Set<string>();
      names.add(basename(file));
      byDirectory.set(dirname(file), names);
    }
    for (const [directory, names] of byDirectory) {
      try {
        // git replaces its index by renaming index.lock over it: the directory sees that.
        const watcher = watch(directory, { persistent: true }, (_event, name) => {
          if (name !== null && names.has(name)) this.#report(join(directory, name));
        });
        watcher.on('error', () => watcher.close());
        this.#watchers.set(`${directory}${sep}\0files`, watcher);
      } catch {
        // git's directory cannot be watched: edits under .ai/ still are.
      }
    }
  }
}
