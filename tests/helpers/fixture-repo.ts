/**
 * A temporary git repository holding a `.ai/` layer, built by the test that needs it: a manifest,
 * the given files (text or bytes) and symbolic links, all added and committed so that
 * `--discovery vcs` serves them.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const DEFAULT_MANIFEST = 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n';

export interface FixtureOptions {
  /** Path (relative to the root, `/` separators) → content. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** Path → link target, created as symbolic links (git tracks them as links). */
  symlinks?: Readonly<Record<string, string>>;
  /** The manifest text; `null` writes none. Defaults to DEFAULT_MANIFEST. */
  manifest?: string | null;
  /** `git init` the root; false leaves a plain directory. Default true. */
  git?: boolean;
  /** Add and commit every file (needs `git`). Default true. */
  commit?: boolean;
  /** Write a `.gitignore` ignoring `.ai/local/`, as a real checkout has. Default true. */
  gitignore?: boolean;
}

export interface FixtureRepo {
  /** Absolute real path of the repository root. */
  readonly root: string;
  /** Removes the whole directory; safe to call twice. */
  cleanup(): Promise<void>;
}

const GIT_IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false'];

/** Runs git in `cwd` and returns its stdout; never takes optional locks. */
export async function git(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', [...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' },
  });
  return stdout;
}

/** Adds and commits every file of the work tree (what .gitignore leaves in), hooks skipped. */
export async function commitAll(root: string, message: string): Promise<void> {
  await git(root, ['add', '-A']);
  await git(root, [...GIT_IDENTITY, 'commit', '-q', '--allow-empty', '--no-verify', '-m', message]);
}

/** Creates a temporary directory (real path, so it compares equal to what the product resolves). */
export async function makeTempDir(prefix = 'majordomus-test-'): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { path, cleanup: () => rm(path, { recursive: true, force: true, maxRetries: 3 }) };
}

/** Creates the repository. Call `cleanup()` in `afterEach`. */
export async function createFixtureRepo(options: FixtureOptions = {}): Promise<FixtureRepo> {
  const { path: root, cleanup } = await makeTempDir('majordomus-repo-');
  try {
    const files: Record<string, string | Uint8Array> = {};
    const manifest = options.manifest === undefined ? DEFAULT_MANIFEST : options.manifest;
    if (manifest !== null) files['.ai/manifest.yaml'] = manifest;
    if (options.gitignore ?? true) files['.gitignore'] = '.ai/local/\n';
    Object.assign(files, options.files ?? {});

    for (const [path, content] of Object.entries(files)) {
      const target = join(root, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    for (const [path, target] of Object.entries(options.symlinks ?? {})) {
      const link = join(root, path);
      await mkdir(dirname(link), { recursive: true });
      await symlink(target, link);
    }
    if (options.git ?? true) {
      await git(root, ['init', '-q']);
      if (options.commit ?? true) await commitAll(root, 'fixture');
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { root, cleanup };
}
