/**
 * majordomus as a user installs it, then the real clients (tests/helpers/real-clients.versions)
 * in a repository it set up, offline. The package is packed (`npm pack`, whose prepack builds) from
 * a copy of this checkout and installed globally into an empty prefix (NPM_CONFIG_PREFIX), whose
 * bin/ comes first on every PATH below; `majordomus init` (the installed one) sets up a fresh
 * repository from a subdirectory:
 * - the tarball holds the build, the launcher, the page, README and LICENSE, and no sources,
 *   tests, benches, fixtures or `.ai/`; the installed launcher runs the installed build as it is;
 * - init writes `majordomus mcp` (found on PATH) into the four configurations, and says it is on
 *   PATH here; `majordomus doctor` (installed) then finds every client would connect;
 * Each client is started FROM A SUBDIRECTORY (`src/deep/`) with nothing but the configuration
 * `init` wrote, against the scripted model API (tests/helpers/model-api.ts), whose first answer
 * calls majordomus's peers tool by the name the client declared for it:
 * - claude (.mcp.json) and codex (.codex/config.toml) start `majordomus mcp` from PATH, call
 *   `majordomus_peers`, and send its answer (the peer board, naming the caller p1 with the
 *   client's own name) back to the model; the server they started (the lease directory appears)
 *   ends with them and removes its lease;
 * - gemini does the same, started at the root: Gemini CLI reads `.gemini/settings.json` only in
 *   its working directory (`loadSettings(process.cwd())`), and the test says so by showing that
 *   from the subdirectory it lists no server at all (a change in gemini turns that check red);
 * - opencode, started in the subdirectory, loads opencode.json and reports majordomus connected
 *   (its `mcp list` makes a real MCP initialize; a whole opencode turn needs a provider package
 *   from npm, so it is not driven offline);
 * and none of them changed a tracked file.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  agentEnvironment,
  installedAgentBinDir,
  installedAgentClis,
  INSTALL_TIMEOUT_MS,
  killAgentTurns,
  runAgentTurn,
  type AgentTurnResult,
  type DrivableAgent,
} from '../helpers/agent-clis.js';
import { withoutCoverage } from '../helpers/coverage-env.js';
import { createFixtureRepo, git, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { INSTALL_PACKAGE_TIMEOUT_MS, packAndInstall, type InstalledPackage } from '../helpers/installed-package.js';
import { conversationOf, startModelApi, type ModelApi, type RecordedRequest, type ScriptedReply } from '../helpers/model-api.js';
import { waitFor } from '../helpers/wait.js';

const execFileAsync = promisify(execFile);

const TURN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 2 * TURN_TIMEOUT_MS;
const SUBDIRECTORY = 'src/deep';
const ANSWER = 'majordomus answered the peers call.';

let repo: FixtureRepo | null = null;
let api: ModelApi | null = null;
let installed: InstalledPackage | null = null;
let installDir: { path: string; cleanup(): Promise<void> } | null = null;
let initOutput = '';
const scratch: Array<{ cleanup(): Promise<void> }> = [];

beforeAll(async () => {
  const clients = installedAgentClis();
  installDir = await makeTempDir('majordomus-installed-');
  installed = await packAndInstall(installDir.path);
  await clients;
  repo = await createFixtureRepo({ manifest: null, gitignore: false, files: { 'src/deep/code.ts': 'export const x = 1;\n' } });
  const init = await execFileAsync(join(installed.bin, 'majordomus'), ['init', '--no-guard'], { cwd: join(repo.root, SUBDIRECTORY), env: userEnv() });
  initOutput = init.stdout;
  await git(repo.root, ['add', '-A']);
  await git(repo.root, ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'init']);
}, INSTALL_TIMEOUT_MS + INSTALL_PACKAGE_TIMEOUT_MS);

afterEach(async () => {
  killAgentTurns();
  await api?.stop();
  api = null;
  for (const dir of scratch.splice(0)) await dir.cleanup();
});

afterAll(async () => {
  await repo?.cleanup();
  await installDir?.cleanup();
});

function installation(): InstalledPackage {
  if (installed === null) throw new Error('majordomus is not installed');
  return installed;
}

/** PATH with the installed package's bin first, as a user's shell has it after `npm install -g`. */
function withInstalledFirst(path: string | undefined): string {
  return `${installation().bin}:${path ?? '/usr/bin:/bin'}`;
}

/**
 * A user's environment: ours, with the installed majordomus first on PATH and nothing of npm's or
 * majordomus's set; no coverage either (the installed copy is not this checkout's dist/).
 */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(withoutCoverage(process.env))) if (!/^(npm_|MAJORDOMUS_)/i.test(name)) env[name] = value;
  return { ...env, PATH: withInstalledFirst(process.env.PATH), MAJORDOMUS_HTTP_PORT: '0', ...extra };
}

function root(): string {
  if (repo === null) throw new Error('no repository');
  return repo.root;
}


const LEASE_DIRECTORY = '.ai/local/state/mcp';

interface DeclaredTool {
  name: string;
  /** The Responses `namespace` tool holding it (Codex groups an MCP server's tools as `mcp__<server>`). */
  namespace?: string;
}

/** Every tool a model request declares (Anthropic, Responses and Gemini shapes). */
function declaredTools(request: RecordedRequest): DeclaredTool[] {
  const tools: DeclaredTool[] = [];
  const visit = (value: unknown, namespace: string | undefined): void => {
    if (Array.isArray(value)) value.forEach((item) => visit(item, namespace));
    else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const isNamespace = record.type === 'namespace' && typeof record.name === 'string';
      if (typeof record.name === 'string' && !isNamespace) tools.push({ name: record.name, ...(namespace === undefined ? {} : { namespace }) });
      const inner = isNamespace ? String(record.name) : namespace;
      for (const key of ['tools', 'functionDeclarations', 'function']) if (key in record) visit(record[key], inner);
    }
  };
  visit((request.body as { tools?: unknown } | null)?.tools, undefined);
  return tools;
}

/** The model's script: call the client's name for majordomus's peers tool, then answer. */
function callPeersThenAnswer(request: RecordedRequest, index: number): ScriptedReply {
  if (index > 0) return { kind: 'text', text: ANSWER };
  const declared = declaredTools(request);
  const peers = declared.find((tool) => tool.name.endsWith('majordomus_peers'));
  if (peers === undefined) {
    return { kind: 'error', status: 400, message: `no majordomus_peers among the declared tools: ${declared.map((tool) => tool.name).join(', ')}` };
  }
  return { kind: 'tool_call', ...peers, input: {} };
}

function describeTurn(result: AgentTurnResult): string {
  return `exit ${result.code ?? result.signal}${result.timedOut ? ' (timed out)' : ''} after ${result.ms} ms\nstdout:\n${result.stdout.slice(-4000)}\nstderr:\n${result.stderr.slice(-4000)}`;
}

/** argv of one turn that may use majordomus's tools, and what the client needs to trust the repository. */
async function prepare(agent: DrivableAgent, home: string, cwd: string): Promise<{ args: string[]; stdin: string | null; env?: Record<string, string> }> {
  const prompt = 'Ask majordomus who is connected.';
  switch (agent) {
    case 'claude':
      // The project's .mcp.json servers are approved for the repository, as a person does once.
      await writeFile(
        join(home, '.claude.json'),
        JSON.stringify({ projects: { [root()]: { enabledMcpjsonServers: ['majordomus'], hasTrustDialogAccepted: true } } }),
      );
      // The prompt on stdin: --allowedTools is variadic.
      // Claude Code connects MCP servers in the background and offers their tools through its
      // ToolSearch (deferred); MCP_CONNECTION_NONBLOCKING=false makes it wait for majordomus and
      // ENABLE_TOOL_SEARCH=false declares its tools in the first request, where the script finds them.
      return {
        args: ['-p', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'mcp__majordomus'],
        stdin: prompt,
        env: { MCP_CONNECTION_NONBLOCKING: 'false', ENABLE_TOOL_SEARCH: 'false' },
      };
    case 'codex':
      // Codex reads a project's .codex/config.toml only in a trusted project.
      await appendFile(join(home, '.codex', 'config.toml'), `\n[projects.${JSON.stringify(root())}]\ntrust_level = "trusted"\n`);
      return { args: ['exec', '--json', '--skip-git-repo-check', '-C', cwd, prompt], stdin: null };
    case 'gemini':
      return { args: ['-p', prompt, '--output-format', 'stream-json', '--approval-mode', 'yolo'], stdin: null };
  }
}

async function turnWithMajordomus(agent: DrivableAgent, cwd: string): Promise<{ result: AgentTurnResult; api: ModelApi }> {
  const dir = await makeTempDir(`majordomus-init-${agent}-`);
  scratch.push(dir);
  const home = join(dir.path, 'home');
  await mkdir(home);
  api = await startModelApi({ replies: callPeersThenAnswer });
  // Codex defers MCP tools behind its tool_search for the models it knows (their metadata says
  // supports_search_tool); with a model it does not know it declares them directly.
  const environment = await agentEnvironment(agent, { home, modelApiUrl: api.url, ...(agent === 'codex' ? { model: 'scripted-model' } : {}) });
  const { args, stdin, env } = await prepare(agent, home, cwd);
  const result = await runAgentTurn(environment.command, args, {
    cwd,
    env: { ...environment.env, ...env, PATH: withInstalledFirst(environment.env.PATH), MAJORDOMUS_HTTP_PORT: '0' },
    stdin,
    timeoutMs: TURN_TIMEOUT_MS,
  });
  return { result, api };
}

/** The server a client started through the launcher has ended and removed its lease. */
async function serverEnded(): Promise<void> {
  await waitFor(() => !existsSync(join(root(), LEASE_DIRECTORY, 'server.json')), { timeoutMs: 90_000, what: 'the lease to be removed' });
}

async function trackedChanges(): Promise<string> {
  return (await git(root(), ['status', '--porcelain', '--untracked-files=no'])).trim();
}

describe('majordomus packed and installed globally', () => {
  it('ships the build, the launcher, the page, README and LICENSE, and no sources, tests, benches, fixtures or .ai/', () => {
    const { files, packMs, installMs } = installation();
    console.info(`npm pack (with its build) took ${packMs} ms, npm install -g ${installMs} ms; ${files.length} files`);
    for (const path of ['package.json', 'README.md', 'LICENSE', 'bin/majordomus-mcp', 'dist/src/cli/main.js', 'dist/workers/http-thread.js', 'page/index.html', 'docs/INIT.md', 'docs/DOCTOR.md']) {
      expect(files, path).toContain(path);
    }
    const unwanted = files.filter((path) => /^(src|tests|benches|workers|scripts|\.ai|\.ci|\.codex|\.gemini|node_modules)\/|fixtures|\.map$|\.ts$|^(\.mcp\.json|opencode\.json|justfile|tsconfig.*|vitest\.config\.ts|package-lock\.json)$/.test(path));
    expect(unwanted).toEqual([]);
  });

  it('links majordomus and majordomus-mcp into the prefix, and the installed launcher runs the installed build without building', async () => {
    const { bin, root: installedRoot } = installation();
    const version = await execFileAsync(join(bin, 'majordomus'), ['--version'], { env: userEnv() });
    expect(version.stdout.trim()).toBe((JSON.parse(await readFile(join(installedRoot, 'package.json'), 'utf8')) as { version: string }).version);
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(join(bin, 'majordomus-mcp'), ['--standalone'], { cwd: join(root(), SUBDIRECTORY), env: userEnv(), timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (typeof error.code === 'number' ? error.code : 1), stdout, stderr }),
      );
      child.stdin?.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'installed', version: '1' } } })}\n`);
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.split('\n')[0] ?? '{}')).toMatchObject({ id: 1, result: { serverInfo: { name: 'majordomus' } } });
    expect(run.stderr).not.toContain('building');
    expect(existsSync(join(installedRoot, 'src'))).toBe(false);
  });

  it('init wrote `majordomus mcp`, found on PATH, into every configuration, and doctor says every client would connect', async () => {
    const { bin } = installation();
    expect(initOutput).toContain(`clients start: majordomus mcp (on PATH here: ${join(bin, 'majordomus')})`);
    const claude = JSON.parse(await readFile(join(root(), '.mcp.json'), 'utf8')) as { mcpServers: Record<string, unknown> };
    expect(claude.mcpServers.majordomus).toEqual({ type: 'stdio', command: 'majordomus', args: ['mcp'], env: {} });
    // Approved and trusted, as a person does once per client.
    const dir = await makeTempDir('majordomus-installed-doctor-');
    scratch.push(dir);
    await writeFile(join(dir.path, '.claude.json'), JSON.stringify({ projects: { [root()]: { enabledMcpjsonServers: ['majordomus'] } } }));
    await mkdir(join(dir.path, '.codex'));
    await writeFile(join(dir.path, '.codex/config.toml'), `[projects.${JSON.stringify(root())}]\ntrust_level = "trusted"\n`);
    await mkdir(join(dir.path, '.gemini'));
    await writeFile(join(dir.path, '.gemini/trustedFolders.json'), JSON.stringify({ [root()]: 'TRUST_FOLDER' }));
    const doctor = await execFileAsync(join(bin, 'majordomus'), ['doctor', '--json'], { cwd: join(root(), SUBDIRECTORY), env: userEnv({ HOME: dir.path }), timeout: 120_000 }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    const report = JSON.parse(doctor.stdout) as { ok: boolean; findings: Array<{ check: string; client?: string; status: string; message: string }> };
    expect(report.ok, `${doctor.stdout}\n${doctor.stderr}`).toBe(true);
    for (const client of ['claude', 'codex', 'gemini', 'opencode']) {
      const start = report.findings.find((found) => found.check === 'client.start' && found.client === client);
      expect(start?.status, JSON.stringify(start)).toBe('ok');
    }
    await serverEnded();
    expect(await trackedChanges()).toBe('');
  }, TEST_TIMEOUT_MS);
});

describe('majordomus init, then the real clients in the repository it set up', () => {
  it.each([
    ['claude', SUBDIRECTORY],
    ['codex', SUBDIRECTORY],
    ['gemini', '.'],
  ] as const)(
    '%s started in "%s" connects to majordomus through the configuration init wrote and calls its peers tool',
    async (agent, where) => {
      // Each client finds no server running: the lease directory it leaves proves it started one.
      await rm(join(root(), '.ai/local'), { recursive: true, force: true });
      const { result, api } = await turnWithMajordomus(agent, join(root(), where));
      expect(result.code, describeTurn(result)).toBe(0);
      expect(api.problems, describeTurn(result)).toEqual([]);
      expect(api.modelRequests).toHaveLength(2);
      // The model called majordomus's tool; the client ran it through majordomus and sent the
      // peer board back: the caller is p1, named by its own clientInfo.
      // (Gemini hands the result on as escaped JSON text inside its own wrapper.)
      const conversation = conversationOf(api.modelRequests[1]!);
      const tool = conversation.find((message) => message.role === 'tool')?.text.replaceAll('\\', '') ?? '';
      expect(tool, `${describeTurn(result)}\n${JSON.stringify(conversation.slice(-3))}`).toMatch(/"you":\s*"p1"/);
      expect(tool).toMatch(/"peers":\s*\[\{"id":\s*"p1"/);
      expect(tool).toMatch(new RegExp(`"client":\\{"name":"[^"]*${agent}`));
      // The launcher started a server in this repository, and it ended with the client.
      expect(existsSync(join(root(), LEASE_DIRECTORY))).toBe(true);
      await serverEnded();
      expect(await trackedChanges()).toBe('');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'gemini started in a subdirectory lists no server: it reads .gemini/settings.json only where it starts',
    async () => {
      const dir = await makeTempDir('majordomus-init-gemini-list-');
      scratch.push(dir);
      const environment = await agentEnvironment('gemini', { home: dir.path, modelApiUrl: 'http://127.0.0.1:9' });
      const { stdout, stderr } = await execFileAsync(environment.command, ['mcp', 'list'], {
        cwd: join(root(), SUBDIRECTORY),
        env: { ...environment.env, PATH: withInstalledFirst(environment.env.PATH), MAJORDOMUS_HTTP_PORT: '0' },
        timeout: TURN_TIMEOUT_MS,
      });
      expect(`${stdout}${stderr}`).toContain('No MCP servers configured');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'opencode started in a subdirectory loads opencode.json and reports majordomus connected',
    async () => {
      const dir = await makeTempDir('majordomus-init-opencode-');
      scratch.push(dir);
      const home = dir.path;
      const env: NodeJS.ProcessEnv = {
        ...withoutCoverage({}),
        PATH: withInstalledFirst(`${await installedAgentBinDir()}:${process.env.PATH ?? '/usr/bin:/bin'}`),
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local', 'share'),
        XDG_CACHE_HOME: join(home, '.cache'),
        XDG_STATE_HOME: join(home, '.local', 'state'),
        NO_COLOR: '1',
        MAJORDOMUS_HTTP_PORT: '0',
      };
      const { stdout, stderr } = await execFileAsync(join(await installedAgentBinDir(), 'opencode'), ['mcp', 'list'], {
        cwd: join(root(), SUBDIRECTORY),
        env,
        timeout: TURN_TIMEOUT_MS,
      });
      const output = `${stdout}${stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
      expect(output).toMatch(/majordomus\s+connected/);
      // The portable command init wrote, found on PATH.
      expect(output).toMatch(/majordomus mcp/);
      await serverEnded();
      expect(await trackedChanges()).toBe('');
    },
    TEST_TIMEOUT_MS,
  );
});
