/**
 * The command line, black-box: the built executable run in temporary directories and git
 * repositories. Covers:
 * - `--help` of every command (and the top level) exits 0 with its usage on stdout; `--version`;
 * - usage errors exit 2: an unknown command, an unknown option, an option of another command;
 * - the root: none found exits 12 naming every directory looked at; a broken manifest exits 10,
 *   also when a valid one sits further up (the search stops there);
 * - discovery: not a git repository exits 13 under the default vcs discovery, and serves under
 *   `--discovery filesystem`;
 * - `mcp --inspect --format json` lists the objects and one diagnostic per bad file (duplicate
 *   identity, symbolic link, oversized, invalid UTF-8, malformed front matter), stdout is only
 *   that JSON; the text format names the same codes; `--strict` refuses the degraded layer (10);
 * - `mcp --inspect` and `mcp --standalone` leave the tree byte-for-byte unchanged and write no
 *   .ai/local;
 * - `capabilities list` (text and json), `describe` (unknown id exits 12), `schema --side input`
 *   (unknown id exits 12), `validate`; a capability that fails unexpectedly (MAJORDOMUS_FAULT)
 *   exits 13 with MAJ_INTERNAL;
 * - a command whose stdout reader has gone (`capabilities list | head -1`) ends quietly with exit
 *   0, no stack trace;
 * - `generate --check` exits 0 on the tree as built.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUT_MS, PACKAGE_ROOT, runCli, spawnCli } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { treeState } from '../helpers/tree-state.js';
import { withTimeout } from '../helpers/wait.js';
import { BUILTIN_CAPABILITY_IDS, BUILTIN_COMMAND_IDS } from '../helpers/builtins.js';

const GOOD_RULE = '---\ntitle: Good rule\ntags: [ok]\n---\n# Good rule\n\nFollow it.\n';
const TWIN_PROFILE = 'id: twin\nagent: claude\nharness: {enabled: true}\n';
const MIB = 1024 * 1024;

/** One clean object and one bad file for every diagnostic the brief names. */
const DEGRADED_FILES: Record<string, string | Uint8Array> = {
  '.ai/repo/rules/good.md': GOOD_RULE,
  '.ai/repo/rules/broken.md': '---\ntitle: Never closed\n# Broken\n\nThe front matter has no closing line.\n',
  '.ai/repo/rules/latin1.md': Buffer.concat([Buffer.from('# Caf'), Buffer.from([0xe9, 0xff, 0xfe]), Buffer.from('\n')]),
  '.ai/repo/knowledge/huge.md': `# Huge\n\n${'x'.repeat(4 * MIB)}\n`,
  '.ai/repo/profiles/first.yaml': TWIN_PROFILE,
  '.ai/repo/profiles/second.yaml': TWIN_PROFILE,
};
const DEGRADED_LINKS = { '.ai/repo/rules/link.md': 'good.md' };
const EXPECTED_DIAGNOSTICS = [
  ['oversized', '.ai/repo/knowledge/huge.md'],
  ['duplicate_identity', '.ai/repo/profiles/first.yaml'],
  ['duplicate_identity', '.ai/repo/profiles/second.yaml'],
  ['malformed_front_matter', '.ai/repo/rules/broken.md'],
  ['invalid_utf8', '.ai/repo/rules/latin1.md'],
  ['symlink', '.ai/repo/rules/link.md'],
];

interface InspectReport {
  state: 'ok' | 'degraded';
  discovery: string;
  counts: Record<string, number>;
  objects: Array<{ uri: string; title: string; path: string }>;
  tools: string[];
  routes: string[];
  diagnostics: Array<{ severity: string; code: string; path: string; message: string }>;
}

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function fixture(...args: Parameters<typeof createFixtureRepo>): Promise<FixtureRepo> {
  const repo = await createFixtureRepo(...args);
  cleanups.push(repo.cleanup);
  return repo;
}

async function tempDir(): Promise<string> {
  const dir = await makeTempDir();
  cleanups.push(dir.cleanup);
  return dir.path;
}

const goodRepo = () => fixture({ files: { '.ai/repo/rules/good.md': GOOD_RULE } });

describe('help, version and usage errors', () => {
  it.each([
    { name: 'majordomus', command: [], usage: 'Usage: majordomus [global options] <command>' },
    { name: 'mcp', command: ['mcp'], usage: 'Usage: majordomus mcp' },
    { name: 'serve', command: ['serve'], usage: 'Usage: majordomus serve' },
    { name: 'capabilities', command: ['capabilities'], usage: 'Usage: majordomus capabilities list' },
    { name: 'generate', command: ['generate'], usage: 'Usage: majordomus generate' },
  ])('prints the usage of $name on stdout with --help or -h and exits 0', async ({ command, usage }) => {
    const cwd = await tempDir();
    for (const flag of ['--help', '-h']) {
      const result = await runCli([...command, flag], { cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(usage);
      expect(result.stderr).toBe('');
    }
  });

  it('prints the package version with --version', async () => {
    const pkg = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version'], { cwd: await tempDir() });
    expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('exits 2 on an unknown command and names it on stderr', async () => {
    const result = await runCli(['frobnicate'], { cwd: await tempDir() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('frobnicate');
  });

  it('exits 2 on an unknown option and names it on stderr', async () => {
    const result = await runCli(['mcp', '--inspect', '--bogus'], { cwd: await tempDir() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--bogus');
  });

  it('exits 2 on an option of another command', async () => {
    const result = await runCli(['generate', '--standalone'], { cwd: await tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--standalone is not an option of generate');
  });
});

describe('finding and reading the layer', () => {
  it('exits 12 without a root and names every directory it looked in', async () => {
    const base = await tempDir();
    const cwd = join(base, 'a', 'b');
    await mkdir(cwd, { recursive: true });
    const looked: string[] = [];
    for (let dir = cwd; ; dir = dirname(dir)) {
      looked.push(dir);
      if (existsSync(join(dir, '.ai', 'manifest.yaml'))) throw new Error(`precondition: ${dir} holds a manifest; this test needs none above ${cwd}`);
      if (dirname(dir) === dir) break;
    }
    const result = await runCli(['mcp', '--inspect'], { cwd });
    expect(result.code).toBe(12);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_NO_ROOT');
    for (const dir of looked) expect(result.stderr).toContain(dir);
  });

  it('exits 10 on a manifest with an unknown key and names the manifest', async () => {
    const repo = await fixture({ manifest: 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nsurprise: true\n' });
    const result = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(result.code).toBe(10);
    expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
    expect(result.stderr).toContain(join(repo.root, '.ai', 'manifest.yaml'));
    expect(result.stderr).toContain('surprise');
  });

  it('exits 10 on a manifest that is not YAML', async () => {
    const repo = await fixture({ manifest: 'schema: [unclosed\n  : :\n' });
    const result = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(result.code).toBe(10);
    expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
  });

  it('stops at a broken manifest instead of searching further up (exit 10)', async () => {
    const repo = await fixture({ files: { 'nested/.ai/manifest.yaml': 'schema: ai-repository/v0\n' } });
    const result = await runCli(['mcp', '--inspect'], { cwd: join(repo.root, 'nested') });
    expect(result.code).toBe(10);
    expect(result.stderr).toContain(join(repo.root, 'nested', '.ai', 'manifest.yaml'));
  });

  it('exits 13 outside a git repository under the default vcs discovery, and serves with --discovery filesystem', async () => {
    const repo = await fixture({ git: false, files: { '.ai/repo/rules/good.md': GOOD_RULE } });
    const vcs = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(vcs.code).toBe(13);
    expect(vcs.stderr).toContain('MAJ_GIT_UNAVAILABLE');
    expect(vcs.stdout).toBe('');
    const walked = await runCli(['--discovery', 'filesystem', 'mcp', '--inspect', '--format', 'json'], { cwd: repo.root });
    expect(walked.code, walked.stderr).toBe(0);
    expect((JSON.parse(walked.stdout) as InspectReport).objects.map((o) => o.uri)).toEqual(['majordomus://rule/good']);
  });

  it('finds the root from a subdirectory and with --repo', async () => {
    const repo = await fixture({ files: { '.ai/repo/rules/good.md': GOOD_RULE, 'src/deep/x.ts': '' } });
    const fromBelow = await runCli(['mcp', '--inspect', '--format', 'json'], { cwd: join(repo.root, 'src', 'deep') });
    expect(fromBelow.code, fromBelow.stderr).toBe(0);
    const elsewhere = await tempDir();
    const withRepo = await runCli(['--repo', repo.root, 'mcp', '--inspect', '--format', 'json'], { cwd: elsewhere });
    expect(withRepo.code, withRepo.stderr).toBe(0);
    expect(withRepo.stdout).toBe(fromBelow.stdout);
  });
});

describe('mcp --inspect', () => {
  it('lists the objects and one diagnostic per bad file, with only the JSON report on stdout', async () => {
    const repo = await fixture({ files: DEGRADED_FILES, symlinks: DEGRADED_LINKS });
    const result = await runCli(['mcp', '--inspect', '--format', 'json'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as InspectReport;
    expect(report.state).toBe('degraded');
    expect(report.discovery).toBe('vcs');
    expect(report.objects).toEqual([{ uri: 'majordomus://rule/good', title: 'Good rule', path: '.ai/repo/rules/good.md' }]);
    expect(report.counts).toEqual({ rule: 1 });
    expect(report.diagnostics.map((d) => [d.code, d.path])).toEqual(EXPECTED_DIAGNOSTICS);
    for (const diagnostic of report.diagnostics) {
      expect(diagnostic.severity).toBe('error');
      expect(diagnostic.message.length).toBeGreaterThan(0);
    }
    expect(report.diagnostics.find((d) => d.code === 'duplicate_identity')?.message).toContain('.ai/repo/profiles/second.yaml');
    expect(report.tools).toContain('majordomus_announce');
    expect(report.routes).toContain('POST /api/v1/peers/announce');
  });

  it('names every diagnostic code in the text format too', async () => {
    const repo = await fixture({ files: DEGRADED_FILES, symlinks: DEGRADED_LINKS });
    const result = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('state: degraded');
    expect(result.stdout).toContain('majordomus://rule/good');
    for (const [code, path] of EXPECTED_DIAGNOSTICS) expect(result.stdout).toContain(`${code} ${path}`);
  });

  it('refuses a degraded layer under --strict with exit 10', async () => {
    const repo = await fixture({
      files: {
        '.ai/repo/rules/good.md': GOOD_RULE,
        '.ai/repo/rules/broken.md': '---\ntitle: Never closed\n# Broken\n',
      },
    });
    const strict = await runCli(['--strict', 'mcp', '--inspect'], { cwd: repo.root });
    expect(strict.code).toBe(10);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain('MAJ_LAYER_DEGRADED');
    expect(strict.stderr).toContain('.ai/repo/rules/broken.md');
    const lenient = await runCli(['mcp', '--inspect'], { cwd: repo.root });
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stdout).toContain('state: degraded');
  });

  it('serves a clean layer under --strict', async () => {
    const repo = await goodRepo();
    const result = await runCli(['--strict', 'mcp', '--inspect', '--format', 'json'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as InspectReport).state).toBe('ok');
  });
});

describe('writing nothing', () => {
  it('leaves the tree byte-for-byte unchanged and writes no .ai/local under mcp --inspect', async () => {
    const repo = await fixture({ files: DEGRADED_FILES, symlinks: DEGRADED_LINKS });
    const before = await treeState(repo.root);
    for (const args of [['mcp', '--inspect'], ['mcp', '--inspect', '--format', 'json'], ['--discovery', 'filesystem', 'mcp', '--inspect']]) {
      const result = await runCli(args, { cwd: repo.root });
      expect(result.code, result.stderr).toBe(0);
    }
    const after = await treeState(repo.root);
    expect(after).toEqual(before);
    expect(after.localExists).toBe(false);
  });

  it('leaves the tree byte-for-byte unchanged and writes no .ai/local under mcp --standalone', async () => {
    const repo = await fixture({ files: DEGRADED_FILES, symlinks: DEGRADED_LINKS });
    const before = await treeState(repo.root);
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'resources/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'majordomus_announce', arguments: { intent: 'edit', paths: ['.ai'] } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'majordomus_info', arguments: {} } },
    ];
    const result = await runCli(['mcp', '--standalone'], { cwd: repo.root, input: requests.map((r) => `${JSON.stringify(r)}\n`).join('') });
    expect(result.code, result.stderr).toBe(0);
    const ids = result.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: number }).id);
    // initialize is answered first; the rest as each answer is ready.
    expect(ids[0]).toBe(1);
    expect([...ids].sort()).toEqual([1, 2, 3, 4]);
    const after = await treeState(repo.root);
    expect(after).toEqual(before);
    expect(after.localExists).toBe(false);
  });
});

describe('capabilities', () => {
  it('lists every capability as text, one line each with its MCP tool and route', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'list'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(BUILTIN_CAPABILITY_IDS.length);
    expect(lines.find((l) => l.startsWith('objects.get '))).toMatch(/objects\.get\s+query\s+majordomus_get\s+GET \/api\/v1\/object$/);
    expect(lines.find((l) => l.startsWith('peers.announce '))).toMatch(/command\s+majordomus_announce\s+POST \/api\/v1\/peers\/announce$/);
  });

  it('lists every capability as JSON with --format json', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'list', '--format', 'json'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    const { capabilities } = JSON.parse(result.stdout) as { capabilities: Array<{ id: string; kind: string }> };
    expect(capabilities.map((c) => c.id)).toEqual(BUILTIN_CAPABILITY_IDS);
    const commands = await runCli(['capabilities', 'list', '--kind', 'command', '--format', 'json'], { cwd: repo.root });
    expect((JSON.parse(commands.stdout) as { capabilities: Array<{ id: string }> }).capabilities.map((c) => c.id)).toEqual(BUILTIN_COMMAND_IDS);
  });

  it('exits 13 with MAJ_INTERNAL and nothing on stdout when the capability fails unexpectedly (MAJORDOMUS_FAULT)', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'list'], { cwd: repo.root, env: { MAJORDOMUS_FAULT: 'capability:capabilities.list' } });
    expect(result.code, result.stderr).toBe(13);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_INTERNAL: Error: capabilities.list failed on purpose (MAJORDOMUS_FAULT)');
    const other = await runCli(['capabilities', 'list'], { cwd: repo.root, env: { MAJORDOMUS_FAULT: 'capability:objects.list' } });
    expect(other.code, other.stderr).toBe(0);
  });

  it('describes objects.get with its annotations and schemas', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'describe', 'objects.get'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id: 'objects.get',
      kind: 'query',
      exposure: { mcp: { tool: 'majordomus_get' }, http: { method: 'GET', path: '/api/v1/object' } },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      input_schema: { type: 'object', required: ['uri'] },
      output_schema: { type: 'object' },
    });
  });

  it('exits 12 describing an unknown capability and names it', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'describe', 'nope'], { cwd: repo.root });
    expect(result.code).toBe(12);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_UNKNOWN_CAPABILITY: ');
    expect(result.stderr).toContain('nope');
  });

  it('prints the input JSON Schema of objects.search with its query property', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'schema', 'objects.search', '--side', 'input'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    const schema = JSON.parse(result.stdout) as { type: string; properties: Record<string, { type?: string }>; required: string[] };
    expect(schema.type).toBe('object');
    expect(schema.properties.query?.type).toBe('string');
    expect(schema.required).toContain('query');
    const output = await runCli(['capabilities', 'schema', 'objects.search', '--side', 'output'], { cwd: repo.root });
    expect(output.code, output.stderr).toBe(0);
    expect((JSON.parse(output.stdout) as { properties: Record<string, unknown> }).properties).toHaveProperty('hits');
  });

  it('exits 12 on the schema of an unknown capability', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'schema', 'nope', '--side', 'input'], { cwd: repo.root });
    expect(result.code).toBe(12);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_UNKNOWN_CAPABILITY: no capability nope');
    expect(result.stderr).toContain('nope');
  });

  it('validates the registry with exit 0', async () => {
    const repo = await goodRepo();
    const result = await runCli(['capabilities', 'validate'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('registry valid');
  });
});

describe('a reader that goes away', () => {
  it.each(
    [
      ['capabilities', 'list'],
      ['capabilities', 'list', '--format', 'json'],
      ['capabilities', 'schema', 'objects.get'],
      ['mcp', '--inspect'],
      ['--version'],
    ].map((args) => ({ command: args.join(' '), args })),
  )('ends $command quietly with exit 0 when its stdout is closed', async ({ args }) => {
    const repo = await goodRepo();
    const cli = spawnCli(args, { cwd: repo.root, env: { MAJORDOMUS_LOG: 'debug' } });
    // Closed before node has even started, so the command's first write fails with EPIPE.
    cli.child.stdout.destroy();
    cli.child.stdin.end();
    const { code, signal } = await withTimeout(cli.exited, DEFAULT_TIMEOUT_MS, `majordomus ${args.join(' ')}`);
    expect(signal).toBeNull();
    expect(code, cli.stderr()).toBe(0);
    expect(cli.stderr()).toContain('stdout closed (EPIPE): the reader has gone; ending');
    expect(cli.stderr()).not.toMatch(/Error|at .+:\d+:\d+|MAJ_INTERNAL/);
  });
});

describe('generate', () => {
  it('passes --check on the tree as built, and writes nothing', async () => {
    const generated = join(PACKAGE_ROOT, 'docs', 'generated');
    const digest = async (): Promise<Record<string, string>> => {
      const out: Record<string, string> = {};
      for (const name of (await readdir(generated)).sort()) {
        out[name] = createHash('sha256').update(await readFile(join(generated, name))).digest('hex');
      }
      return out;
    };
    const before = await digest();
    const result = await runCli(['generate', '--check'], { cwd: PACKAGE_ROOT });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(await digest()).toEqual(before);
  });

  it('checks the generated files of the package whatever the working directory', async () => {
    const result = await runCli(['generate', '--check'], { cwd: await tempDir() });
    expect(result.code, result.stderr).toBe(0);
  });
});
