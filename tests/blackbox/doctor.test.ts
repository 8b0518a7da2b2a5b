/**
 * `majordomus doctor`, black-box, in temporary repositories set up by `majordomus init`, with a
 * throwaway HOME for the clients' own files and `majordomus` on PATH as an installation puts it
 * (a shim running this build). Covers:
 * - every client configured, approved and trusted: exit 0; for each client its file, the command
 *   resolved on PATH, a real start answering initialize (timed, started once for all four), the
 *   approval; the layer, the lease, the guard, Node.js and uWS; the same as JSON with `--json`;
 *   the server it started has ended and removed its lease;
 * - with a shared server running: the start attaches to it (the server keeps serving, its lease
 *   unchanged), the lease is reported live with its mode, and the token never appears;
 * - nothing approved yet: a warning per client with how to grant it, still exit 0;
 * - a rejection (Claude Code's disabledMcpjsonServers, Codex's untrusted, Gemini's DO_NOT_TRUST):
 *   exit 1, each with its fix;
 * - majordomus not on PATH: exit 1, and the fix names the install and --npx;
 * - an entry naming a launcher path of another machine: "does not exist on this machine", and the
 *   fix is init --force;
 * - a command that never answers (killed after --timeout) or exits first (its stderr quoted);
 * - a .mcp.json with a comment (Claude Code wants strict JSON); an entry switched off, one naming
 *   no command, a command that answers as another server; a corrupt lease;
 * - a degraded layer (a warning listing the diagnostic), no layer (MAJ_NO_ROOT: init), no client
 *   configured, outside a repository (Node.js and uWS still reported);
 * - a lease of mode 644 is a warning with `chmod 600`; guard hooks naming a majordomus that is gone;
 * - usage errors: an argument, --timeout 0 (MAJ_USAGE, exit 2).
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN_JS, runCli, spawnCli, type CliProcess, type CliResult } from '../helpers/cli.js';
import { createFixtureRepo, git, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { waitFor } from '../helpers/wait.js';

interface Finding {
  check: string;
  client?: string;
  status: 'ok' | 'info' | 'warn' | 'fail';
  message: string;
  fix?: string;
  ms?: number;
}

interface Report {
  ok: boolean;
  root: string | null;
  version: string;
  findings: Finding[];
}

const CLIENTS = ['claude', 'gemini', 'codex', 'opencode'] as const;
const LEASE = '.ai/local/state/mcp/server.json';

const cleanups: Array<() => Promise<void>> = [];
const servers: CliProcess[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Setup {
  repo: FixtureRepo;
  home: string;
  /** A directory holding `majordomus` (a shim of this build), as an installation's bin. */
  bin: string;
}

/** A repository with a one-rule layer that `init` set up, a throwaway HOME and `majordomus` on PATH. */
async function setUp(options: { init?: boolean; manifest?: string | null } = {}): Promise<Setup> {
  const repo = await createFixtureRepo({ manifest: options.manifest, files: { '.ai/repo/rules/hello.md': '# Hello\n\nA rule.\n', 'src/deep/code.ts': 'export {};\n' } });
  cleanups.push(() => repo.cleanup());
  const scratch = await makeTempDir('majordomus-doctor-');
  cleanups.push(scratch.cleanup);
  const home = join(scratch.path, 'home');
  const bin = join(scratch.path, 'bin');
  await mkdir(home);
  await mkdir(bin);
  await writeFile(join(bin, 'majordomus'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN_JS)} "$@"\n`, { mode: 0o755 });
  if (options.init ?? true) {
    const init = await runCli(['init', '--no-guard'], { cwd: repo.root });
    expect(init.code, init.stderr).toBe(0);
  }
  return { repo, home, bin };
}

/** The environment the user's clients (and the doctor) run with: this HOME, majordomus on PATH or not. */
function userEnv(setup: Setup, onPath = true): Record<string, string | undefined> {
  return {
    HOME: setup.home,
    PATH: onPath ? `${setup.bin}:${process.env.PATH ?? ''}` : (process.env.PATH ?? ''),
    CODEX_HOME: undefined,
    CLAUDE_CONFIG_DIR: undefined,
    GEMINI_CLI_TRUST_WORKSPACE: undefined,
    GEMINI_CLI_TRUSTED_FOLDERS_PATH: undefined,
    GEMINI_RESTRICTED_MODE: undefined,
    MAJORDOMUS_HTTP_PORT: '0',
  };
}

/** Approves majordomus for Claude Code and trusts the repository for Codex and Gemini CLI, as a person does once. */
async function approveAll(setup: Setup): Promise<void> {
  const root = setup.repo.root;
  await writeFile(join(setup.home, '.claude.json'), JSON.stringify({ projects: { [root]: { enabledMcpjsonServers: ['majordomus'] } } }));
  await mkdir(join(setup.home, '.codex'));
  await writeFile(join(setup.home, '.codex/config.toml'), `model = "x"\n\n[projects.${JSON.stringify(root)}]\ntrust_level = "trusted"\n`);
  await mkdir(join(setup.home, '.gemini'));
  await writeFile(join(setup.home, '.gemini/trustedFolders.json'), JSON.stringify({ [root]: 'TRUST_FOLDER' }));
}

async function doctor(setup: Setup, args: readonly string[] = ['--json'], options: { cwd?: string; onPath?: boolean } = {}): Promise<CliResult> {
  return runCli(['doctor', ...args], { cwd: options.cwd ?? join(setup.repo.root, 'src/deep'), env: userEnv(setup, options.onPath), timeoutMs: 120_000 });
}

function report(result: CliResult): Report {
  return JSON.parse(result.stdout) as Report;
}

function findingsOf(parsed: Report, check: string, client?: string): Finding[] {
  return parsed.findings.filter((found) => found.check === check && found.client === client);
}

function one(parsed: Report, check: string, client?: string): Finding {
  const found = findingsOf(parsed, check, client);
  expect(found, JSON.stringify(parsed.findings, null, 2)).toHaveLength(1);
  return found[0] as Finding;
}

describe('majordomus doctor in a repository init set up', () => {
  it('says every client would connect when each is configured, resolvable, answering and approved (exit 0), and the same as JSON', async () => {
    const setup = await setUp();
    await approveAll(setup);
    const result = await doctor(setup);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const parsed = report(result);
    expect(parsed.ok).toBe(true);
    expect(parsed.root).toBe(setup.repo.root);
    for (const client of CLIENTS) {
      expect(one(parsed, 'client.config', client)).toMatchObject({ status: 'ok' });
      expect(one(parsed, 'client.config', client).message).toContain('starts `majordomus mcp`');
      expect(one(parsed, 'client.command', client)).toMatchObject({ status: 'ok', message: `majordomus resolves to ${join(setup.bin, 'majordomus')}` });
      const start = one(parsed, 'client.start', client);
      expect(start.status, start.message).toBe('ok');
      expect(start.message).toMatch(/^starts and answers initialize in \d+ ms \(majordomus \d+\.\d+\.\d+/);
      expect(start.ms).toBeGreaterThan(0);
      expect(one(parsed, 'client.approval', client).status).toBe('ok');
    }
    // One start serves all four: they name the same command.
    expect(one(parsed, 'client.start', 'opencode').message).toContain('started once for every client naming this command');
    expect(one(parsed, 'client.note', 'gemini').message).toContain('start gemini at the repository\'s root');
    expect(one(parsed, 'layer')).toMatchObject({ status: 'ok' });
    expect(one(parsed, 'layer').message).toContain('serves 1 object');
    expect(one(parsed, 'lease').message).toContain('no shared server is running');
    expect(one(parsed, 'guard')).toMatchObject({ status: 'info', fix: 'majordomus guard install' });
    expect(one(parsed, 'node')).toMatchObject({ status: 'ok' });
    expect(['ok', 'info']).toContain(one(parsed, 'uws').status);
    expect(one(parsed, 'uws').message).toMatch(/HTTP is served by (uWebSockets\.js|node:http)/);
    // The server the doctor started ended with it, as a client's does.
    await waitFor(() => !existsSync(join(setup.repo.root, LEASE)), { timeoutMs: 20_000, what: 'the started server to remove its lease' });

    const text = await doctor(setup, []);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`majordomus doctor ${parsed.version} in ${setup.repo.root}\n`);
    for (const name of ['Claude Code', 'Gemini CLI', 'Codex', 'opencode', 'Every client']) expect(text.stdout).toContain(`\n${name}\n`);
    expect(text.stdout).toMatch(/ {2}ok {4}starts and answers initialize in \d+ ms/);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('every configured client would connect');
  });

  it('attaches to a running shared server without disturbing it, reports its lease live and never prints the token', async () => {
    const setup = await setUp();
    await approveAll(setup);
    const server = spawnCli(['serve', '--port', '0'], { cwd: setup.repo.root, env: userEnv(setup) });
    servers.push(server);
    const lease = join(setup.repo.root, LEASE);
    await waitFor(async () => existsSync(lease) && (JSON.parse(await readFile(lease, 'utf8')) as { url: string | null }).url !== null, { timeoutMs: 30_000, what: 'the server to publish its URL' });
    const before = await readFile(lease, 'utf8');
    const token = (JSON.parse(before) as { token: string }).token;

    const result = await doctor(setup);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).not.toContain(token);
    expect(result.stderr).not.toContain(token);
    const parsed = report(result);
    expect(one(parsed, 'client.start', 'claude').status).toBe('ok');
    const live = one(parsed, 'lease');
    expect(live.status).toBe('ok');
    expect(live.message).toContain('a shared server is running');
    expect(live.message).toContain(`Its token is in ${lease} (mode 600`);
    // The server still serves, with the same lease.
    expect(await readFile(lease, 'utf8')).toBe(before);
    expect(server.child.exitCode).toBeNull();

    await chmod(lease, 0o644);
    const loose = report(await doctor(setup));
    const mode = findingsOf(loose, 'lease').find((found) => found.status === 'warn');
    expect(mode?.message).toContain('has mode 644, not 600');
    expect(mode?.fix).toBe(`chmod 600 ${lease}`);
  });

  it('warns, with how to grant each, when nothing is approved or trusted yet, and still exits 0', async () => {
    const setup = await setUp();
    const result = await doctor(setup, []);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('warn  not approved yet: Claude Code asks once');
    expect(result.stdout).toContain('fix: approve majordomus when Claude Code asks, or add "enabledMcpjsonServers": ["majordomus"] to .claude/settings.local.json');
    expect(result.stdout).toContain(`[projects.${JSON.stringify(setup.repo.root)}]`);
    expect(result.stdout).toContain(`trust_level = "trusted"`);
    expect(result.stdout).toContain(`add ${JSON.stringify({ [setup.repo.root]: 'TRUST_FOLDER' })} to ${join(setup.home, '.gemini/trustedFolders.json')}`);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('every configured client would connect (3 warnings above)');
  });

  it('fails a client that was told no (Claude Code rejected, Codex untrusted, Gemini DO_NOT_TRUST): exit 1, each with its fix', async () => {
    const setup = await setUp();
    const root = setup.repo.root;
    await mkdir(join(root, '.claude'));
    await writeFile(join(root, '.claude/settings.local.json'), JSON.stringify({ disabledMcpjsonServers: ['majordomus'] }));
    await mkdir(join(setup.home, '.codex'));
    await writeFile(join(setup.home, '.codex/config.toml'), `[projects.${JSON.stringify(root)}]\ntrust_level = "untrusted"\n`);
    await mkdir(join(setup.home, '.gemini'));
    // The parent is trusted, the repository itself refused: the longest rule wins.
    await writeFile(join(setup.home, '.gemini/trustedFolders.json'), JSON.stringify({ [join(root, '..')]: 'TRUST_FOLDER', [root]: 'DO_NOT_TRUST' }));
    const result = await doctor(setup);
    expect(result.code).toBe(1);
    const parsed = report(result);
    expect(parsed.ok).toBe(false);
    expect(one(parsed, 'client.approval', 'claude')).toMatchObject({ status: 'fail' });
    expect(one(parsed, 'client.approval', 'claude').fix).toContain('remove "majordomus" from disabledMcpjsonServers');
    expect(one(parsed, 'client.approval', 'codex')).toMatchObject({ status: 'fail' });
    expect(one(parsed, 'client.approval', 'codex').fix).toContain('trust_level = "trusted"');
    expect(one(parsed, 'client.approval', 'gemini')).toMatchObject({ status: 'fail' });
    expect(one(parsed, 'client.approval', 'gemini').fix).toContain('"TRUST_FOLDER"');
    expect(one(parsed, 'client.approval', 'opencode').status).toBe('ok');

    const text = await doctor(setup, []);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('3 problems keep a client from connecting:\n  Claude Code: Claude Code was told not to start majordomus here');
  });
});

describe('majordomus doctor finding what stops a client', () => {
  it('says majordomus is not on PATH (exit 1) and names the install and --npx', async () => {
    const setup = await setUp();
    await approveAll(setup);
    const parsed = report(await doctor(setup, ['--json'], { onPath: false }));
    expect(parsed.ok).toBe(false);
    for (const client of CLIENTS) {
      const command = one(parsed, 'client.command', client);
      expect(command).toMatchObject({ status: 'fail', message: 'majordomus is not on PATH, so ' + { claude: 'Claude Code', gemini: 'Gemini CLI', codex: 'Codex', opencode: 'opencode' }[client] + ' cannot start majordomus' });
      expect(command.fix).toContain('npm install -g majordomus');
      expect(command.fix).toContain('majordomus init --npx --force');
      expect(findingsOf(parsed, 'client.start', client)).toEqual([]);
    }
  });

  it('names an entry whose launcher path does not exist on this machine, and init --force as the fix', async () => {
    const setup = await setUp({ init: false });
    await writeFile(join(setup.repo.root, '.mcp.json'), JSON.stringify({ mcpServers: { majordomus: { type: 'stdio', command: '/home/someone/majordomus/bin/majordomus-mcp', args: [] } } }));
    const parsed = report(await doctor(setup));
    const command = one(parsed, 'client.command', 'claude');
    expect(command.status).toBe('fail');
    expect(command.message).toBe('/home/someone/majordomus/bin/majordomus-mcp does not exist on this machine, so Claude Code cannot start majordomus');
    expect(command.fix).toContain('majordomus init --force');
    // The other clients are not configured: information, not failure.
    expect(one(parsed, 'client.config', 'codex')).toMatchObject({ status: 'info', message: 'not configured (no .codex/config.toml)' });
  });

  it('fails a command that never answers (stopped after --timeout) and one that exits first, quoting what it said', async () => {
    const setup = await setUp({ init: false });
    const root = setup.repo.root;
    await mkdir(join(root, 'tools'));
    await writeFile(join(root, 'tools/silent'), '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    await writeFile(join(root, 'tools/broken'), '#!/bin/sh\necho "cannot find the thing it needs" >&2\nexit 3\n', { mode: 0o755 });
    await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { majordomus: { type: 'stdio', command: 'tools/silent', args: [] } } }));
    await writeFile(join(root, 'opencode.json'), JSON.stringify({ mcp: { majordomus: { type: 'local', command: ['tools/broken', 'mcp'], enabled: true } } }));
    const started = Date.now();
    const parsed = report(await doctor(setup, ['--json', '--timeout', '1'], { cwd: root }));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(one(parsed, 'client.command', 'claude')).toMatchObject({ status: 'ok', message: `tools/silent resolves to ${join(root, 'tools/silent')}` });
    expect(one(parsed, 'client.start', 'claude')).toMatchObject({ status: 'fail', message: '`tools/silent` did not answer initialize within 1 s' });
    expect(one(parsed, 'client.start', 'claude').fix).toBe(`run \`tools/silent\` in ${root} to see why`);
    expect(one(parsed, 'client.start', 'opencode')).toMatchObject({ status: 'fail', message: '`tools/broken mcp` exited with code 3 before answering initialize: cannot find the thing it needs' });
  });

  it('tells apart an entry switched off, one naming no command, a command that starts another server, and a corrupt lease', async () => {
    const setup = await setUp({ init: false });
    const root = setup.repo.root;
    await mkdir(join(root, 'tools'));
    // Answers initialize as some other server, then waits for its stdin to close.
    await writeFile(
      join(root, 'tools/other'),
      '#!/bin/sh\nread line\necho \'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"other","version":"9"}}}\'\ncat >/dev/null\n',
      { mode: 0o755 },
    );
    await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { majordomus: { command: 'tools/other', args: [] } } }));
    await writeFile(join(root, 'opencode.json'), JSON.stringify({ mcp: { majordomus: { type: 'local', command: ['majordomus', 'mcp'], enabled: false } } }));
    await mkdir(join(root, '.codex'));
    await writeFile(join(root, '.codex/config.toml'), '[mcp_servers.majordomus]\nargs = ["mcp"]\n');
    await mkdir(join(root, '.ai/local/state/mcp'), { recursive: true });
    await writeFile(join(root, LEASE), 'not json', { mode: 0o600 });
    const parsed = report(await doctor(setup, ['--json'], { cwd: root }));
    expect(one(parsed, 'client.start', 'claude')).toMatchObject({ status: 'warn', message: expect.stringContaining('(other 9)'), fix: 'the command starts another server: point the entry at majordomus' });
    expect(one(parsed, 'client.config', 'opencode')).toMatchObject({ status: 'warn', message: 'the majordomus entry of opencode.json is switched off' });
    expect(findingsOf(parsed, 'client.start', 'opencode')).toEqual([]);
    expect(one(parsed, 'client.config', 'codex')).toMatchObject({ status: 'fail', message: 'the majordomus entry of .codex/config.toml names no command' });
    expect(one(parsed, 'client.config', 'gemini')).toMatchObject({ status: 'info', message: 'not configured (no .gemini/settings.json)' });
    expect(one(parsed, 'lease')).toMatchObject({ status: 'info', message: `the lease ${join(root, LEASE)} is corrupt (not JSON): the next client to start takes it over` });
  });

  it('fails a .mcp.json with a comment: Claude Code reads it as strict JSON', async () => {
    const setup = await setUp({ init: false });
    await writeFile(join(setup.repo.root, '.mcp.json'), '{\n  // ours\n  "mcpServers": {"majordomus": {"command": "majordomus", "args": ["mcp"]}}\n}\n');
    const parsed = report(await doctor(setup));
    expect(one(parsed, 'client.config', 'claude')).toMatchObject({
      status: 'fail',
      message: ".mcp.json cannot be read by Claude Code: holds comments or trailing commas, which Claude Code's loader refuses (it wants strict JSON)",
    });
  });

  it('warns of a degraded layer, listing its diagnostic, and fails a repository without one (MAJ_NO_ROOT: run init)', async () => {
    const degraded = await setUp();
    await writeFile(join(degraded.repo.root, '.ai/repo/rules/broken.md'), '---\ntitle: [unclosed\n---\n# Broken\n');
    // Served under vcs discovery once git knows it.
    await git(degraded.repo.root, ['add', '.ai/repo/rules/broken.md']);
    const layer = one(report(await doctor(degraded)), 'layer');
    expect(layer.status).toBe('warn');
    expect(layer.message).toContain('.ai/repo/rules/broken.md');
    expect(layer.fix).toContain('majordomus mcp --inspect');

    const bare = await setUp({ manifest: null, init: false });
    await writeFile(join(bare.repo.root, '.mcp.json'), JSON.stringify({ mcpServers: { majordomus: { command: 'majordomus', args: ['mcp'] } } }));
    const result = await doctor(bare);
    expect(result.code).toBe(1);
    const parsed = report(result);
    expect(one(parsed, 'layer')).toMatchObject({ status: 'fail', fix: 'run `majordomus init` in the repository' });
    expect(one(parsed, 'layer').message).toContain('MAJ_NO_ROOT');
    expect(one(parsed, 'client.start', 'claude').message).toContain('exited with code 12 before answering initialize');
    expect(findingsOf(parsed, 'lease')).toEqual([]);
  });

  it('fails when no client names majordomus, and outside a repository still reports Node.js and uWS', async () => {
    const setup = await setUp({ init: false });
    const none = await doctor(setup);
    expect(none.code).toBe(1);
    expect(one(report(none), 'clients')).toMatchObject({ status: 'fail', fix: 'run `majordomus init` in the repository' });

    const outside = await makeTempDir('majordomus-doctor-outside-');
    cleanups.push(outside.cleanup);
    const result = await doctor(setup, ['--json'], { cwd: outside.path });
    expect(result.code).toBe(1);
    const parsed = report(result);
    expect(parsed.root).toBeNull();
    expect(one(parsed, 'repository')).toMatchObject({ status: 'fail' });
    expect(one(parsed, 'repository').message).toContain('is not inside a git work tree');
    expect(one(parsed, 'node').status).toBe('ok');
    expect(findingsOf(parsed, 'uws')).toHaveLength(1);
  });

  it('warns of guard hooks that name a majordomus that is gone', async () => {
    const setup = await setUp();
    const install = await runCli(['guard', 'install'], { cwd: setup.repo.root });
    expect(install.code, install.stderr).toBe(0);
    expect(one(report(await doctor(setup)), 'guard')).toMatchObject({ status: 'ok' });
    const hook = join(setup.repo.root, '.git/hooks/pre-commit');
    await writeFile(hook, (await readFile(hook, 'utf8')).replace(/^launcher=.*$/m, "launcher='/nowhere/main.js'"));
    const guard = one(report(await doctor(setup)), 'guard');
    expect(guard.status).toBe('warn');
    expect(guard.message).toContain('pre-commit hook names a node or majordomus that no longer exists');
    expect(guard.fix).toContain('majordomus guard install');
  });

  it('refuses an argument and a --timeout out of range (MAJ_USAGE, exit 2)', async () => {
    const setup = await setUp({ init: false });
    const extra = await doctor(setup, ['now']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('MAJ_USAGE: doctor takes no arguments, not "now"');
    const zero = await doctor(setup, ['--timeout', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('MAJ_USAGE: --timeout must be an integer 1–600, not "0"');
  });
});
