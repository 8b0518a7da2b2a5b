/**
 * Ways out of the checkout, black-box: the built executable in temporary git repositories whose
 * layer points, through a link or a manifest path, at something outside the checkout or at
 * something it must never write into. Covers:
 * - a committed directory replaced by a link to an outside directory (vcs): the file below it is
 *   left out with a `symlink` diagnostic naming the link, `--inspect` and `resources/read` never
 *   show the outside content;
 * - a committed link on the way to `repo.path` (`sub -> /outside`, `repo.path: sub/repo`): an
 *   empty, degraded layer with a `symlink` diagnostic naming `sub`, in both discovery modes;
 * - `local.path: ../ESCAPED/x` exits 10 naming the field under `mcp`, `mcp --inspect`,
 *   `mcp --standalone` and `serve`, and creates nothing anywhere;
 * - `local.path` inside the repo half, in `.git`, holding a tracked file, or reached through a link
 *   exits 10 and writes nothing there;
 * - `.ai/manifest.yaml` as a FIFO makes `mcp`, `mcp --inspect` and `serve` exit 10 promptly; as a
 *   symbolic link or over 64 KiB, exit 10 naming why;
 * - a layer file whose name is not UTF-8 is an `invalid_utf8` diagnostic saying so (not ENOENT),
 *   in both discovery modes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createFixtureRepo, DEFAULT_MANIFEST, git, makeTempDir, type FixtureOptions, type FixtureRepo } from '../helpers/fixture-repo.js';
import { connectMcp, type McpConnection } from '../helpers/mcp-client.js';
import { treeState } from '../helpers/tree-state.js';

const GOOD_RULE = '---\ntitle: Good rule\n---\n# Good rule\n\nFollow it.\n';
/** Never committed: a leak of the outside file shows this word in an answer. */
const MARKER = 'OUTSIDE-ONLY-7f3c9a';
const OUTSIDE_DOC = `# Outside secret\n\n${MARKER}\n`;
/** A FIFO must be refused at once; a hang is caught well inside the default 30 s. */
const PROMPT_MS = 20_000;

interface InspectReport {
  state: 'ok' | 'degraded';
  objects: Array<{ uri: string; path: string }>;
  diagnostics: Array<{ severity: string; code: string; path: string; message: string }>;
}

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function fixture(options: FixtureOptions): Promise<FixtureRepo> {
  const repo = await createFixtureRepo(options);
  cleanups.push(repo.cleanup);
  return repo;
}

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('majordomus-outside-');
  cleanups.push(dir.cleanup);
  return dir.path;
}

async function connect(cwd: string, globalArgs: readonly string[] = []): Promise<McpConnection> {
  const connection = await connectMcp({ cwd, standalone: true, globalArgs });
  cleanups.push(connection.close);
  return connection;
}

/** Every path below `dir`, to prove nothing was created there. */
async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

async function inspect(cwd: string, globalArgs: readonly string[] = []): Promise<{ report: InspectReport; stdout: string }> {
  const result = await runCli([...globalArgs, 'mcp', '--inspect', '--format', 'json'], { cwd });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).not.toContain(MARKER);
  return { report: JSON.parse(result.stdout) as InspectReport, stdout: result.stdout };
}

/** A resources/read that must be refused without the outside content in the refusal. */
async function expectUnreadable(connection: McpConnection, uri: string): Promise<void> {
  const { resources } = await connection.client.listResources();
  expect(resources.map((r) => r.uri)).not.toContain(uri);
  const answer = await connection.client.readResource({ uri }).then(
    (value) => JSON.stringify(value),
    (error: unknown) => `refused: ${(error as Error).message}`,
  );
  expect(answer).toMatch(/^refused: /);
  expect(answer).not.toContain(MARKER);
}

describe('symbolic links on the way to a layer file', () => {
  it('leaves out a committed file whose directory became a link to the outside, naming the link (vcs)', async () => {
    const repo = await fixture({
      files: {
        '.ai/repo/rules/good.md': GOOD_RULE,
        '.ai/repo/knowledge/linkdir/secret.md': '# Inside secret\n\nThe committed text.\n',
      },
    });
    const outside = await tempDir();
    await writeFile(join(outside, 'secret.md'), OUTSIDE_DOC);
    await rm(join(repo.root, '.ai/repo/knowledge/linkdir'), { recursive: true });
    await symlink(outside, join(repo.root, '.ai/repo/knowledge/linkdir'));

    const { report, stdout } = await inspect(repo.root);
    expect(stdout).not.toContain(MARKER);
    expect(report.state).toBe('degraded');
    expect(report.objects.map((o) => o.uri)).toEqual(['majordomus://rule/good']);
    expect(report.diagnostics).toHaveLength(1);
    expect(report.diagnostics[0]).toMatchObject({ severity: 'error', code: 'symlink', path: '.ai/repo/knowledge/linkdir/secret.md' });
    expect(report.diagnostics[0]?.message).toContain('.ai/repo/knowledge/linkdir is a symbolic link');

    const connection = await connect(repo.root);
    await expectUnreadable(connection, 'majordomus://document/linkdir/secret');
    const { contents } = await connection.client.readResource({ uri: 'majordomus://rule/good' });
    expect(contents).toEqual([{ uri: 'majordomus://rule/good', mimeType: 'text/markdown', text: GOOD_RULE }]);
  });

  it.each(['vcs', 'filesystem'] as const)('serves an empty, degraded layer when a committed link leads to repo.path (%s)', async (mode) => {
    const outside = await tempDir();
    await mkdir(join(outside, 'repo', 'rules'), { recursive: true });
    await writeFile(join(outside, 'repo', 'rules', 'escaped.md'), OUTSIDE_DOC);
    const repo = await fixture({
      manifest: 'schema: ai-repository/v1\nrepo: {path: sub/repo}\nlocal: {path: .ai/local}\n',
      symlinks: { sub: outside },
    });
    const globalArgs = ['--discovery', mode];

    const { report, stdout } = await inspect(repo.root, globalArgs);
    expect(stdout).not.toContain(MARKER);
    expect(report.state).toBe('degraded');
    expect(report.objects).toEqual([]);
    expect(report.diagnostics.map((d) => [d.code, d.path])).toEqual([['symlink', 'sub']]);
    expect(report.diagnostics[0]?.message).toContain('sub/repo');

    const connection = await connect(repo.root, globalArgs);
    await expectUnreadable(connection, 'majordomus://rule/escaped');
  });
});

describe('the local half is validated before anything is written', () => {
  const COMMANDS = [
    { name: 'mcp', args: ['mcp', '--http-port', '0'] },
    { name: 'mcp --inspect', args: ['mcp', '--inspect'] },
    { name: 'mcp --standalone', args: ['mcp', '--standalone'] },
    { name: 'serve', args: ['serve', '--port', '0'] },
  ];

  it.each(COMMANDS)('refuses local.path ../ESCAPED/x under $name with exit 10 and creates nothing anywhere', async ({ args }) => {
    // The checkout is a directory of the fixture, so `..` is a directory this test owns.
    const repo = await fixture({
      manifest: null,
      files: {
        'checkout/.ai/manifest.yaml': 'schema: ai-repository/v1\nlocal: {path: ../ESCAPED/x}\n',
        'checkout/.ai/repo/rules/good.md': GOOD_RULE,
      },
    });
    const before = await entries(repo.root);
    const result = await runCli(args, { cwd: join(repo.root, 'checkout') });
    expect(result.code, result.stderr).toBe(10);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
    expect(result.stderr).toContain('local.path');
    expect(existsSync(join(repo.root, 'ESCAPED'))).toBe(false);
    expect(await entries(repo.root)).toEqual(before);
  });

  it.each([
    { path: '.ai/repo/rules', why: 'inside the repo half', written: '.ai/repo/rules/state' },
    { path: '.ai/repo', why: 'inside the repo half', written: '.ai/repo/state' },
    { path: '.git', why: '.git', written: '.git/state' },
    { path: '.git/majordomus', why: '.git', written: '.git/majordomus' },
  ])('refuses local.path $path ($why) with exit 10 and writes nothing there', async ({ path, why, written }) => {
    const repo = await fixture({
      manifest: `schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: ${path}}\n`,
      files: { '.ai/repo/rules/good.md': GOOD_RULE },
    });
    const before = await treeState(repo.root);
    for (const args of [['mcp', '--http-port', '0'], ['mcp', '--inspect']]) {
      const result = await runCli(args, { cwd: repo.root });
      expect(result.code, result.stderr).toBe(10);
      expect(result.stderr).toContain('local.path');
      expect(result.stderr).toContain(why);
    }
    expect(existsSync(join(repo.root, written))).toBe(false);
    expect(await treeState(repo.root)).toEqual(before);
  });

  it('refuses repo.path inside .git with exit 10', async () => {
    const repo = await fixture({ manifest: 'schema: ai-repository/v1\nrepo: {path: .git/layer}\n' });
    const result = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(10);
    expect(result.stderr).toContain('repo.path');
  });

  it('refuses a local.path holding a tracked file with exit 10, naming the file, and writes nothing', async () => {
    const repo = await fixture({
      manifest: 'schema: ai-repository/v1\nlocal: {path: .ai/state}\n',
      files: { '.ai/repo/rules/good.md': GOOD_RULE, '.ai/state/keep.md': 'tracked by mistake\n' },
    });
    const before = await treeState(repo.root, '.ai/state');
    for (const args of [['mcp', '--http-port', '0'], ['serve', '--port', '0'], ['mcp', '--inspect']]) {
      const result = await runCli(args, { cwd: repo.root });
      expect(result.code, result.stderr).toBe(10);
      expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
      expect(result.stderr).toContain('.ai/state/keep.md');
    }
    expect(await entries(join(repo.root, '.ai/state'))).toEqual(['keep.md']);
    expect(await treeState(repo.root, '.ai/state')).toEqual(before);
  });

  it('refuses a local half reached through a link with exit 10, and creates nothing at the link target', async () => {
    const outside = await tempDir();
    const repo = await fixture({ files: { '.ai/repo/rules/good.md': GOOD_RULE } });
    // Not committed: a link a user (or a tool) left in the working tree.
    await symlink(outside, join(repo.root, '.ai/local'));
    for (const args of [['mcp', '--http-port', '0'], ['serve', '--port', '0'], ['mcp', '--inspect']]) {
      const result = await runCli(args, { cwd: repo.root });
      expect(result.code, result.stderr).toBe(10);
      expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
      expect(result.stderr).toContain('.ai/local is a symbolic link');
    }
    expect(await entries(outside)).toEqual([]);
  });
});

describe('a manifest that is not a regular file', () => {
  it.each([
    { name: 'mcp', args: ['mcp', '--http-port', '0'] },
    { name: 'mcp --inspect', args: ['mcp', '--inspect'] },
    { name: 'serve', args: ['serve', '--port', '0'] },
  ])('exits 10 at once when .ai/manifest.yaml is a FIFO ($name)', async ({ args }) => {
    const repo = await fixture({ manifest: null, files: { '.ai/repo/rules/good.md': GOOD_RULE } });
    const manifest = join(repo.root, '.ai', 'manifest.yaml');
    execFileSync('mkfifo', [manifest]);
    const result = await runCli(args, { cwd: repo.root, timeoutMs: PROMPT_MS });
    expect(result.code, result.stderr).toBe(10);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
    expect(result.stderr).toContain(manifest);
    expect(result.stderr).toContain('a FIFO, not a regular file');
    expect(existsSync(join(repo.root, '.ai', 'local'))).toBe(false);
  });

  it('exits 10 when .ai/manifest.yaml is a symbolic link, even to a valid manifest', async () => {
    const repo = await fixture({
      manifest: null,
      files: { '.ai/real-manifest.yaml': DEFAULT_MANIFEST },
      symlinks: { '.ai/manifest.yaml': 'real-manifest.yaml' },
    });
    for (const args of [['mcp', '--inspect'], ['mcp', '--http-port', '0']]) {
      const result = await runCli(args, { cwd: repo.root });
      expect(result.code, result.stderr).toBe(10);
      expect(result.stderr).toContain('a symbolic link');
    }
    expect(existsSync(join(repo.root, '.ai', 'local'))).toBe(false);
  });

  it('exits 10 on a manifest over 64 KiB without parsing it', async () => {
    const repo = await fixture({ manifest: `${DEFAULT_MANIFEST}#${'x'.repeat(64 * 1024)}\n` });
    const result = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(10);
    expect(result.stderr).toContain('65536-byte');
  });
});

describe('file names that are not UTF-8', () => {
  it.each(['vcs', 'filesystem'] as const)('reports a rule whose name is not UTF-8 as invalid_utf8, not as missing (%s)', async (mode) => {
    const repo = await fixture({ files: { '.ai/repo/rules/good.md': GOOD_RULE }, commit: false });
    // `caf\xe9.md`: Latin-1, not UTF-8.
    const name = Buffer.concat([Buffer.from(join(repo.root, '.ai/repo/rules/caf')), Buffer.from([0xe9]), Buffer.from('.md')]);
    await writeFile(name, '# Café\n');
    await git(repo.root, ['add', '-A']);
    await git(repo.root, ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'fixture']);

    const { report } = await inspect(repo.root, ['--discovery', mode]);
    expect(report.objects.map((o) => o.uri)).toEqual(['majordomus://rule/good']);
    expect(report.diagnostics.map((d) => [d.code, d.path])).toEqual([['invalid_utf8', '.ai/repo/rules/caf\uFFFD.md']]);
    expect(report.diagnostics[0]?.message).toContain('name is not valid UTF-8');
    expect(report.diagnostics[0]?.message).not.toContain('ENOENT');
  });
});
