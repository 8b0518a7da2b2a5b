/**
 * The git guard, black-box: `majordomus guard …` run as a user runs it, and real `git commit` and
 * `git push` in fixture repositories running the hooks it installs. Covers:
 *
 * With no server running:
 * - install, then a commit passes with nothing from the guard on stderr; uninstall restores;
 * - a user's own pre-commit hook is moved aside, still runs (it leaves a marker) and, when it
 *   fails, fails the commit; uninstall puts it back byte for byte;
 * - MAJORDOMUS_GUARD=off says once that the guard was bypassed; a lease whose server is gone is
 *   silence; a malformed MAJORDOMUS_GUARD or MAJORDOMUS_PEER fails the commit naming it;
 * - status (text and JSON); every bad command line is MAJ_USAGE (exit 2) with its own message;
 *   a foreign hook with a `.user` beside it, or a directory outside git, is refused.
 *
 * With a live server (an owner and a bridge, claims made through `majordomus_claim`):
 * - a commit touching another live peer's exclusive claim is refused naming the peer, its client,
 *   its intent and the claim; MAJORDOMUS_PEER naming the holder lets it through, naming another
 *   peer does not; warn mode (installed or for one command) commits with the warning; a shared
 *   claim is one note; renames are checked on both paths; pre-push refuses too;
 * - an agent running in its own session is recognised by its process ancestry: its own claim does
 *   not stop its own commit, but stops everybody else's;
 * - a server that answers the claims request with an error lets the commit through with a warning;
 * - the guard capabilities over MCP and REST, the status never cached.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAIN_JS, cliEnv, runCli } from '../helpers/cli.js';
import { createFixtureRepo, git, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { rawRequest } from '../helpers/serve.js';
import { Scene, portOf, toolOutput, waitForLease, type SharedClient } from '../helpers/shared.js';
import { isAlive, waitFor } from '../helpers/wait.js';

const IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false'];

interface GitRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs git as a user would in a shell, hooks and all, with `env` added to the environment. */
function gitRun(cwd: string, args: readonly string[], env: Record<string, string | undefined> = {}): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...IDENTITY, ...args], { cwd, env: cliEnv({ MAJORDOMUS_GUARD: undefined, MAJORDOMUS_PEER: undefined, ...env }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end();
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function writeIn(root: string, path: string, content = `${path} ${Math.random()}\n`): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}

/** Stages `path` (written anew) and commits it. */
async function commitFile(root: string, path: string, env: Record<string, string | undefined> = {}): Promise<GitRun> {
  await writeIn(root, path);
  await git(root, ['add', '--', path]);
  return gitRun(root, ['commit', '-q', '-m', `change ${path}`], env);
}

const head = async (root: string): Promise<string> => (await git(root, ['rev-parse', 'HEAD'])).trim();

async function userHook(root: string, name: string, body: string): Promise<string> {
  const path = join(root, '.git/hooks', name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const guard = (root: string, args: readonly string[], env: Record<string, string | undefined> = {}) => runCli(['guard', ...args], { cwd: root, env });

describe('the git guard with no server running', () => {
  let repo: FixtureRepo;

  beforeEach(async () => {
    repo = await createFixtureRepo({ files: { 'src/a.ts': 'export const a = 1;\n' } });
  });

  afterEach(async () => {
    await repo.cleanup();
  });

  it('installs, lets a commit through saying nothing, and uninstalls', async () => {
    const installed = await guard(repo.root, ['install']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('git guard installed');
    expect(installed.stdout).toMatch(/pre-commit\s+the git guard \(refuse\)/);
    expect(installed.stdout).toMatch(/pre-push\s+the git guard \(refuse\)/);

    const before = await head(repo.root);
    const commit = await commitFile(repo.root, 'src/a.ts');
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stderr).toBe('');
    expect(await head(repo.root)).not.toBe(before);

    const removed = await guard(repo.root, ['uninstall']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('removed the git guard from pre-commit and pre-push');
    const status = JSON.parse((await guard(repo.root, ['status', '--format', 'json'])).stdout);
    expect(status.hooks.map((h: { state: string }) => h.state)).toEqual(['absent', 'absent']);
  });

  it('runs a user pre-commit hook first, fails the commit when it fails, and puts it back on uninstall', async () => {
    const marker = join(repo.root, '.git', 'user-hook-ran');
    const path = await userHook(repo.root, 'pre-commit', `echo ran >> '${marker}'\nif [ -f '${marker}.fail' ]; then echo "user hook says no" >&2; exit 3; fi`);
    const original = await readFile(path);

    const installed = await guard(repo.root, ['install', '--hooks', 'pre-commit']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('moved your pre-commit hook to pre-commit.user');
    expect(installed.stdout).toContain('your own hook (pre-commit.user) runs first');

    const passed = await commitFile(repo.root, 'src/a.ts');
    expect(passed.code, passed.stderr).toBe(0);
    expect(await readFile(marker, 'utf8')).toBe('ran\n');

    await writeFile(`${marker}.fail`, '');
    const before = await head(repo.root);
    const failed = await commitFile(repo.root, 'src/a.ts');
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('user hook says no');
    expect(await head(repo.root)).toBe(before);
    expect(await readFile(marker, 'utf8')).toBe('ran\nran\n');

    const removed = await guard(repo.root, ['uninstall']);
    expect(removed.stdout).toContain('put back your pre-commit hook');
    expect((await readFile(path)).equals(original)).toBe(true);
  });

  it('says once that the guard was bypassed with MAJORDOMUS_GUARD=off', async () => {
    await guard(repo.root, ['install']);
    const commit = await commitFile(repo.root, 'src/a.ts', { MAJORDOMUS_GUARD: 'off' });
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stderr).toBe('majordomus git guard: bypassed for this commit (MAJORDOMUS_GUARD=off); claims were not checked.\n');
  });

  it('passes silently when the lease names a server that is gone', async () => {
    await guard(repo.root, ['install']);
    const lease = join(repo.root, '.ai/local/state/mcp/server.json');
    await mkdir(dirname(lease), { recursive: true });
    // A port nothing listens on: the lease of a server that died without removing it.
    await writeFile(lease, JSON.stringify({ schema: 'majordomus-mcp-lease/v1', pid: 999_999, token: 'gone', root: repo.root, url: 'http://127.0.0.1:9', started_at: new Date().toISOString(), version: '0' }));
    const commit = await commitFile(repo.root, 'src/a.ts');
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stderr).toBe('');
  });

  it('fails the commit naming a malformed MAJORDOMUS_GUARD or MAJORDOMUS_PEER', async () => {
    await guard(repo.root, ['install']);
    const badMode = await commitFile(repo.root, 'src/a.ts', { MAJORDOMUS_GUARD: 'of' });
    expect(badMode.code).not.toBe(0);
    expect(badMode.stderr).toContain('MAJ_USAGE: MAJORDOMUS_GUARD="of" is not one of refuse, warn, off');
    const badPeer = await gitRun(repo.root, ['commit', '-q', '-m', 'x'], { MAJORDOMUS_PEER: 'peer3' });
    expect(badPeer.code).not.toBe(0);
    expect(badPeer.stderr).toContain('MAJ_USAGE: MAJORDOMUS_PEER="peer3" is not a peer id such as p3');
  });

  it('reports status in text and JSON', async () => {
    await userHook(repo.root, 'pre-push', 'exit 0');
    const text = await guard(repo.root, ['status']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe('hooks directory: .git/hooks\npre-commit  no hook\npre-push    a hook that is not the guard\n');
    await guard(repo.root, ['install', '--mode', 'warn', '--hooks', 'pre-push']);
    const json = await guard(repo.root, ['status', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toEqual({
      directory: '.git/hooks',
      hooks: [
        { hook: 'pre-commit', state: 'absent', mode: null, chained: false, launcher_found: null },
        { hook: 'pre-push', state: 'ours', mode: 'warn', chained: true, launcher_found: true },
      ],
    });
  });

  it.each([
    [[], 'guard needs install, uninstall, status or run'],
    [['frob'], 'guard needs install, uninstall, status or run, not "frob"'],
    [['install', '--mode', 'maybe'], '--mode must be one of refuse, warn, not "maybe"'],
    [['install', '--hooks', 'pre-merge'], '--hooks takes pre-commit, pre-push or both separated by a comma, each once, not "pre-merge"'],
    [['install', '--hooks', 'pre-commit,pre-commit'], 'each once, not "pre-commit,pre-commit"'],
    [['install', '--format', 'yaml'], '--format must be one of text, json, not "yaml"'],
    [['status', '--mode', 'warn'], '--mode is not an option of guard status'],
    [['uninstall', '--hooks', 'pre-push'], '--hooks is not an option of guard uninstall'],
    [['status', 'now'], 'unexpected argument "now"'],
    [['run'], 'guard run needs the hook it runs for, pre-commit or pre-push'],
    [['run', 'post-commit'], 'guard run needs the hook it runs for, pre-commit or pre-push, not "post-commit"'],
    [['run', 'pre-commit', '--format', 'json'], '--format is not an option of guard run'],
    [['run', 'pre-commit', '--strict'], '--strict is not an option of guard run'],
    [['install', '--json'], '--json is not an option of guard'],
  ])('refuses guard %j with MAJ_USAGE', async (args, message) => {
    const run = await guard(repo.root, args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('MAJ_USAGE');
    expect(run.stderr).toContain(message);
  });

  it('refuses to install over a foreign hook with a .user beside it, changing nothing', async () => {
    await userHook(repo.root, 'pre-commit', 'echo current');
    await userHook(repo.root, 'pre-commit.user', 'echo older');
    const run = await guard(repo.root, ['install']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the git guard was not installed: pre-commit: a hook of your own is in place and pre-commit.user exists too');
    expect(await readFile(join(repo.root, '.git/hooks/pre-commit'), 'utf8')).toContain('echo current');
    const status = JSON.parse((await guard(repo.root, ['status', '--format', 'json'])).stdout);
    expect(status.hooks.map((h: { state: string }) => h.state)).toEqual(['foreign', 'absent']);
  });

  it('refuses a checkout that is not in a git work tree', async () => {
    const plain = await createFixtureRepo({ git: false });
    try {
      // --discovery filesystem: the default (vcs) cannot even list the layer without git.
      const run = await runCli(['--discovery', 'filesystem', 'guard', 'status'], { cwd: plain.root });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('the checkout is not a git work tree, so it has no git hooks');
    } finally {
      await plain.cleanup();
    }
  });
});

/** Runs `tools/call` in a separate agent process: it starts its own `majordomus mcp` and runs git. */
const AGENT = `
import { spawn, execFile } from 'node:child_process';
import { createInterface } from 'node:readline';
const [main, root] = process.argv.slice(2);
const server = spawn(process.execPath, [main, 'mcp', '--http-port', '0'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
const answers = new Map();
createInterface({ input: server.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  answers.get(message.id)?.(message);
});
let next = 0;
const request = (method, params) => new Promise((resolve) => {
  const id = ++next;
  answers.set(id, resolve);
  server.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\\n');
});
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agent-c', version: '1' } });
server.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\\n');
say({ ready: true, server: server.pid });
createInterface({ input: process.stdin }).on('line', async (line) => {
  const order = JSON.parse(line);
  if (order.tool) say({ tool: (await request('tools/call', { name: order.tool, arguments: order.arguments })).result });
  if (order.git) execFile('git', order.git, { cwd: root }, (error, stdout, stderr) => say({ git: { code: error ? error.code : 0, stderr } }));
}).on('close', () => { server.stdin.end(); server.once('exit', () => process.exit(0)); });
`;

describe('the git guard with a live server and claims', () => {
  const scene = new Scene();
  let repo: FixtureRepo;
  let owner: SharedClient;
  let holder: SharedClient;
  let holderId: string;
  let ownerId: string;

  beforeAll(async () => {
    repo = await scene.repo({ files: { 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'src/old.ts': 'export const old = 1;\n'.repeat(30), 'docs/x.md': 'x\n' } });
    scene.defer(() => scene.rebaseline(repo)); // the commits change tracked files on purpose
    owner = await scene.client(repo.root, { name: 'client-a' });
    holder = await scene.client(repo.root, { name: 'client-b' });
    ownerId = (await toolOutput(owner.client, 'majordomus_claims')).you;
    holderId = (await toolOutput(holder.client, 'majordomus_claims')).you;
    expect([ownerId, holderId]).toEqual(['p1', 'p2']);
    await toolOutput(holder.client, 'majordomus_claim', { paths: ['src/b.ts', 'src/target.ts', 'src/old.ts'], intent: 'refactor the "b" module' });
    await toolOutput(holder.client, 'majordomus_claim', { paths: ['docs/**'], intent: 'rewrite the docs', exclusive: false });
    const installed = await toolOutput(owner.client, 'majordomus_guard_install', {});
    expect(installed.hooks.map((h: { state: string }) => h.state)).toEqual(['ours', 'ours']);
  });

  afterAll(async () => {
    await scene.cleanup();
  });

  it('refuses a commit touching another live peer\'s exclusive claim, naming the peer, its client, its intent and the claim', async () => {
    const before = await head(repo.root);
    const commit = await commitFile(repo.root, 'src/b.ts');
    expect(commit.code).not.toBe(0);
    expect(await head(repo.root)).toBe(before);
    expect(commit.stderr).toContain('majordomus git guard: this commit is refused: it touches paths another agent claimed exclusively.');
    expect(commit.stderr).toMatch(/p2 \("client-b"\) holds src\/b\.ts, src\/old\.ts, src\/target\.ts exclusively for "refactor the \\"b\\" module" \(claim c\d+\); this commit touches src\/b\.ts/);
    expect(commit.stderr).toContain('To go on: talk to p2');
    expect(commit.stderr).toContain('set MAJORDOMUS_PEER to your peer id'); // the test process is no agent
    await git(repo.root, ['reset', '-q', '--hard']);
  });

  it('lets the holder commit when MAJORDOMUS_PEER names it, and not another peer', async () => {
    const other = await commitFile(repo.root, 'src/b.ts', { MAJORDOMUS_PEER: ownerId });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('p2 ("client-b") holds');
    expect(other.stderr).not.toContain('MAJORDOMUS_PEER to your peer id');
    const own = await gitRun(repo.root, ['commit', '-q', '-m', 'the holder commits'], { MAJORDOMUS_PEER: holderId });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).toBe('');
  });

  it('commits with the warning in warn mode, for one command or as installed', async () => {
    const once = await commitFile(repo.root, 'src/b.ts', { MAJORDOMUS_GUARD: 'warn' });
    expect(once.code, once.stderr).toBe(0);
    expect(once.stderr).toContain('majordomus git guard: warning: this commit touches paths another agent claimed exclusively; it goes on (MAJORDOMUS_GUARD=warn).');
    expect(once.stderr).toContain('p2 ("client-b") holds');

    expect((await guard(repo.root, ['install', '--mode', 'warn'])).code).toBe(0);
    try {
      const installed = await commitFile(repo.root, 'src/b.ts');
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr).toContain('it goes on (MAJORDOMUS_GUARD=warn)');
      // The one-command setting wins over the installed mode.
      const refused = await commitFile(repo.root, 'src/b.ts', { MAJORDOMUS_GUARD: 'refuse' });
      expect(refused.code).not.toBe(0);
      await git(repo.root, ['reset', '-q', '--hard']);
    } finally {
      await guard(repo.root, ['install', '--mode', 'refuse']);
    }
  });

  it('checks both paths of a rename', async () => {
    await mkdir(join(repo.root, 'lib'), { recursive: true });
    await git(repo.root, ['mv', 'src/old.ts', 'lib/new.ts']);
    const away = await gitRun(repo.root, ['commit', '-q', '-m', 'rename a claimed file away']);
    expect(away.code).not.toBe(0);
    expect(away.stderr).toContain('this commit touches src/old.ts');
    await git(repo.root, ['reset', '-q', '--hard']);

    await git(repo.root, ['mv', 'src/a.ts', 'src/target.ts']);
    const onto = await gitRun(repo.root, ['commit', '-q', '-m', 'rename onto a claimed path']);
    expect(onto.code).not.toBe(0);
    expect(onto.stderr).toContain('this commit touches src/target.ts');
    await git(repo.root, ['reset', '-q', '--hard']);
  });

  it('notes a shared claim in one line and commits', async () => {
    const commit = await commitFile(repo.root, 'docs/x.md');
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stderr.trim().split('\n')).toHaveLength(1);
    expect(commit.stderr).toMatch(/^majordomus git guard: note: p2 \("client-b"\) shares docs\/\*\* for "rewrite the docs" \(claim c\d+\); this commit touches docs\/x\.md\n$/);
  });

  it('refuses a push of commits touching another peer\'s exclusive claim', async () => {
    const remote = await makeTempDir('majordomus-guard-remote-');
    try {
      await git(remote.path, ['init', '-q', '--bare']);
      await git(repo.root, ['remote', 'add', 'origin', remote.path]);
      // History so far holds commits of src/b.ts (the holder's, the warned ones): bypassed once.
      const first = await gitRun(repo.root, ['push', '-q', 'origin', 'HEAD:refs/heads/main'], { MAJORDOMUS_GUARD: 'off' });
      expect(first.code, first.stderr).toBe(0);
      const bypassed = await commitFile(repo.root, 'src/b.ts', { MAJORDOMUS_GUARD: 'off' });
      expect(bypassed.code, bypassed.stderr).toBe(0);
      const push = await gitRun(repo.root, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain('majordomus git guard: this push is refused');
      expect(push.stderr).toContain('this push touches src/b.ts');
      expect((await git(remote.path, ['rev-parse', 'main'])).trim()).not.toBe(await head(repo.root));
      // A new branch sends the commits no remote-tracking ref has: the same one.
      await git(repo.root, ['fetch', '-q', 'origin']);
      const branch = await gitRun(repo.root, ['push', '-q', 'origin', 'HEAD:refs/heads/feature']);
      expect(branch.code).not.toBe(0);
      expect(branch.stderr).toContain('this push touches src/b.ts');
    } finally {
      await git(repo.root, ['remote', 'remove', 'origin']).catch(() => undefined);
      await remote.cleanup();
    }
  });

  it('recognises an agent by its process ancestry: its own claim does not stop it, and stops everybody else', async () => {
    const dir = await makeTempDir('majordomus-agent-');
    scene.defer(dir.cleanup);
    await writeFile(join(dir.path, 'agent.mjs'), AGENT);
    // Its own session, as an agent started from another terminal would have.
    const agent = spawn(process.execPath, [join(dir.path, 'agent.mjs'), MAIN_JS, repo.root], { cwd: repo.root, detached: true, env: cliEnv({ MAJORDOMUS_POOL_THREADS: '1' }), stdio: ['pipe', 'pipe', 'pipe'] });
    scene.track(agent.pid ?? -1);
    const said: Array<Record<string, any>> = [];
    let agentErr = '';
    agent.stderr.setEncoding('utf8').on('data', (chunk: string) => (agentErr += chunk));
    agent.stdout.setEncoding('utf8').on('data', (chunk: string) => said.push(...chunk.split('\n').filter(Boolean).map((line) => JSON.parse(line))));
    scene.defer(async () => {
      agent.stdin.end();
      await waitFor(() => !isAlive(agent.pid ?? -1), { what: 'the agent to exit', timeoutMs: 20_000 }).catch(() => agent.kill('SIGKILL'));
    });
    const hear = async (key: string): Promise<any> => {
      const found = await waitFor(() => said.find((entry) => key in entry), { what: `the agent's ${key}\n${agentErr}`, timeoutMs: 40_000 });
      said.splice(said.indexOf(found), 1);
      return found[key];
    };
    const ready = await hear('server');
    scene.track(ready);
    const order = (value: unknown): void => void agent.stdin.write(`${JSON.stringify(value)}\n`);

    order({ tool: 'majordomus_claim', arguments: { paths: ['src/agent.ts'], intent: 'the agent works here' } });
    const claimed = await hear('tool');
    expect(claimed.isError ?? false, JSON.stringify(claimed)).toBe(false);
    const agentId = claimed.structuredContent.claim.peer as string;

    const ours = await commitFile(repo.root, 'src/agent.ts');
    expect(ours.code).not.toBe(0);
    expect(ours.stderr).toContain(`${agentId} ("agent-c") holds src/agent.ts exclusively for "the agent works here"`);
    // The agent commits the same staged file itself: the server knows it by its ancestry.
    order({ git: [...IDENTITY, 'commit', '-q', '-m', 'the agent commits its own file'] });
    const own = await hear('git');
    expect(own.stderr).toBe('');
    expect(own.code).toBe(0);
  });

  it('reports guard status over MCP and REST, never from a cache', async () => {
    const lease = await waitForLease(repo.root);
    const port = portOf(lease.url as string);
    const auth = { Authorization: `Bearer ${lease.token}`, 'Content-Type': 'application/json' };
    const status = async (): Promise<any> => (await rawRequest({ port, path: '/api/v1/guard' })).json();
    expect((await status()).hooks[1]).toMatchObject({ hook: 'pre-push', state: 'ours', mode: 'refuse' });

    const changed = await rawRequest({ port, method: 'POST', path: '/api/v1/guard/install', headers: auth, body: JSON.stringify({ mode: 'warn', hooks: ['pre-push'] }) });
    expect(changed.status, changed.text).toBe(200);
    expect((await status()).hooks.map((h: { mode: string }) => h.mode)).toEqual(['refuse', 'warn']);

    const unauthorised = await rawRequest({ port, method: 'POST', path: '/api/v1/guard/uninstall', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(unauthorised.status).toBe(401);

    const viaMcp = await toolOutput(owner.client, 'majordomus_guard_status');
    expect(viaMcp).toEqual(await status());
    const removed = await toolOutput(holder.client, 'majordomus_guard_uninstall');
    expect(removed.removed).toEqual(['pre-commit', 'pre-push']);
    expect((await status()).hooks.map((h: { state: string }) => h.state)).toEqual(['absent', 'absent']);
    await toolOutput(owner.client, 'majordomus_guard_install', {});
  });
});

describe('the git guard facing a server that fails', () => {
  const scene = new Scene();

  afterEach(async () => {
    await scene.cleanup();
  });

  it('lets the commit through with one warning when the claims request answers an error', async () => {
    const repo = await scene.repo({ files: { 'src/a.ts': 'a\n' } });
    scene.defer(() => scene.rebaseline(repo));
    await scene.client(repo.root, { env: { MAJORDOMUS_FAULT: 'capability:claims.list' } });
    expect((await guard(repo.root, ['install'])).code).toBe(0);
    const commit = await commitFile(repo.root, 'src/a.ts');
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stderr).toMatch(/^majordomus git guard: warning: could not check claims: the server answered HTTP 500 \(.*\); the commit goes on unchecked\.\n$/);
  });
});
