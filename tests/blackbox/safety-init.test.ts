/**
 * `majordomus init` never writes outside the repository — black-box, the built executable in
 * temporary git repositories whose targets are symbolic links. Covers:
 * - a target whose path passes through a symbolic link or leaves the repository is refused with
 *   exit code 10 and the local error code `MAJ_UNSAFE_TARGET` on stderr naming the offending
 *   path: `.codex` linked to an outside folder holding a `config.toml`, `.gemini` linked to an
 *   empty outside folder, `.ai` linked to an empty outside folder, `.mcp.json` linked to an outside
 *   file, and `.gemini` linked to a folder inside the repository;
 * - nothing is written anywhere: the repository and the outside folder are byte for byte what they
 *   were (every entry compared, links not followed);
 * - `--dry-run` reports the same refusal (same exit code and error code) and writes nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir } from '../helpers/fixture-repo.js';
import { dirState } from '../helpers/tree-state.js';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Case {
  /** The offending path, relative to the repository, as stderr must name it. */
  link: string;
  /** What the outside folder holds before init runs. */
  outside: Record<string, string>;
  /** The link's target: a path in the outside folder (`<outside>/…`) or inside the repository. */
  target: (outside: string) => string;
  /** Files the repository holds besides the link. */
  files?: Record<string, string>;
}

const CODEX_THEIRS = '# somebody else\'s codex settings\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n';

const cases: Array<[string, Case]> = [
  ['.codex linked to an outside folder holding config.toml', { link: '.codex', outside: { 'config.toml': CODEX_THEIRS }, target: (outside) => outside }],
  ['.gemini linked to an empty outside folder', { link: '.gemini', outside: {}, target: (outside) => outside }],
  ['.ai linked to an empty outside folder', { link: '.ai', outside: {}, target: (outside) => outside }],
  ['.mcp.json linked to an outside file', { link: '.mcp.json', outside: { 'claude.json': '{"mcpServers": {}}\n' }, target: (outside) => join(outside, 'claude.json') }],
  ['.gemini linked to a folder inside the repository', { link: '.gemini', outside: {}, target: () => 'shared/gemini', files: { 'shared/gemini/notes.md': 'kept\n' } }],
];

describe('majordomus init and symbolic links', () => {
  it.each(cases)('refuses %s with MAJ_UNSAFE_TARGET naming it (also with --dry-run), writing nothing anywhere', async (_what, spec) => {
    const outside = await makeTempDir('majordomus-init-outside-');
    cleanups.push(() => outside.cleanup());
    for (const [path, content] of Object.entries(spec.outside)) {
      await mkdir(join(outside.path, path, '..'), { recursive: true });
      await writeFile(join(outside.path, path), content);
    }
    const repo = await createFixtureRepo({
      manifest: null,
      gitignore: false,
      commit: false,
      files: { 'src/index.ts': 'export {};\n', ...(spec.files ?? {}) },
      symlinks: { [spec.link]: spec.target(outside.path) },
    });
    cleanups.push(() => repo.cleanup());
    const before = { repo: await dirState(repo.root, ['.git']), outside: await dirState(outside.path) };

    for (const args of [['--dry-run', '--no-guard'], ['--no-guard']]) {
      const result = await runCli(['init', ...args], { cwd: repo.root });
      const what = `init ${args.join(' ')}: exit ${result.code}; stderr: ${result.stderr.slice(0, 600)}`;
      expect.soft(result.code, what).toBe(10);
      expect.soft(result.stderr, what).toContain('MAJ_UNSAFE_TARGET');
      expect.soft(result.stderr, what).toContain(spec.link);
      expect.soft(await dirState(repo.root, ['.git']), `${what}\nthe repository is unchanged`).toEqual(before.repo);
      expect.soft(await dirState(outside.path), `${what}\nthe outside folder is unchanged`).toEqual(before.outside);
    }
  });
});
