/**
 * Builds small layer fixtures in temporary directories. Each test creates its own tree and
 * removes it in afterEach; nothing is shared between tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const MANIFEST = 'schema: ai-repository/v1\nrepo: { path: .ai/repo }\nlocal: { path: .ai/local }\n';

/** Temporary directories created by a test file, removed by `cleanup()`. */
export class Fixtures {
  readonly #made: string[] = [];

  /** A fresh empty directory (its real path). */
  async dir(): Promise<string> {
    const made = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-layer-')));
    this.#made.push(made);
    return made;
  }

  /** A fresh directory holding `files` (paths relative to it) and, unless given, a valid manifest. */
  async tree(files: Record<string, string | Buffer>, manifest: string | Buffer | null = MANIFEST): Promise<string> {
    const root = await this.dir();
    if (manifest !== null) await put(root, '.ai/manifest.yaml', manifest);
    for (const [path, content] of Object.entries(files)) await put(root, path, content);
    return root;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.#made.splice(0).map((path) => rm(path, { recursive: true, force: true })));
  }
}

/** Writes `content` at `root/path`, creating directories. */
export async function put(root: string, path: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}

/** Runs git in `cwd` with a fixed identity; returns stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `git init` plus `git add` of `paths` (everything when none are given). */
export function gitTrack(root: string, ...paths: string[]): void {
  git(root, 'init', '-q');
  git(root, 'add', '--', ...(paths.length > 0 ? paths : ['.']));
}

/** A Markdown file with YAML front matter. */
export function md(frontMatter: string | null, body: string): string {
  return frontMatter === null ? body : `---\n${frontMatter}---\n${body}`;
}
