/**
 * A prompt file that is not a regular file — black-box, the built executable as the shared server
 * (its own stdio client, REST with the lease's token) in a temporary git repository whose profile
 * runs the fake agent CLI. Covers:
 * - `spawn` with `file` naming a FIFO (mkfifo) or a unix socket inside the checkout is refused at
 *   once (well under 1 s) with the wire code `not_regular_file` (an isError result
 *   `not_regular_file: …` over MCP, 422 over REST), six of them concurrently;
 * - after them every route still answers within 2 s: the gateway's `GET /v1/models`,
 *   `session_list` (MCP and REST) and `GET /api/v1/objects`;
 * - a path out of the checkout is refused with `outside_checkout`;
 * - the refused spawns hold no live-session slot: with `max_live_sessions: 1`, after a FIFO and a
 *   socket were refused, a normal spawn runs.
 */
import { execFile } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { rest } from '../helpers/coordination.js';
import { answer, callTool, harnessFiles, invocations, outcome, scratchDir } from '../helpers/harness.js';
import { Scene, waitForLease, type SharedClient } from '../helpers/shared.js';
import { writeGatewayConfig } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const execFileAsync = promisify(execFile);

/** How long a refusal may take ("at once"), and how long a route may take to answer afterwards. */
const REFUSAL_MS = 1_000;
const ROUTE_MS = 2_000;
/** How long the test waits for a spawn before calling it hung (beyond REFUSAL_MS: it failed already). */
const HUNG_MS = 3_000;
const FIFO = 'prompts/pipe';
const SOCKET = 'prompts/agent.sock';

/**
 * Lets every reader blocked opening the FIFO go (opening its write end and closing it again), until
 * none has come for a while: a server that wedged on it can then stop.
 */
async function releaseReaders(fifo: string): Promise<void> {
  let quiet = 0;
  await waitFor(
    () => {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        quiet = 0;
      } catch {
        quiet += 1; // ENXIO: nobody is reading (or the file is gone)
      }
      return quiet >= 10;
    },
    { what: `no reader left on ${fifo}`, timeoutMs: 10_000, intervalMs: 50 },
  ).catch(() => undefined);
}

interface Attempt {
  over: 'mcp' | 'rest';
  file: string;
  ms: number;
  /** The refusal's wire code, 'answered' for a session, or 'hung' past HUNG_MS. */
  code: string;
  status?: number;
  text: string;
}

describe('a prompt file that is not a regular file', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  /** A checkout whose `prompts/` holds a FIFO and a listening unix socket beside a normal prompt. */
  async function checkout(policy: Record<string, unknown> = {}): Promise<{ root: string; log: string; owner: SharedClient }> {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({
      files: {
        ...harnessFiles({ profiles: { worker: { agent: 'claude', env: { FAKE_AGENT_LOG: log } } }, policy }),
        'prompts/ok.md': 'answer:fine\n',
      },
    });
    const fifo = join(repo.root, FIFO);
    await execFileAsync('mkfifo', [fifo]);
    const listener: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(join(repo.root, SOCKET), resolve));
    scene.defer(() => new Promise<void>((resolve) => listener.close(() => resolve())));
    scene.defer(() => releaseReaders(fifo));
    await scene.rebaseline(repo);
    await writeGatewayConfig(repo.root, { unreachable: { baseUrl: 'http://127.0.0.1:9/v1', models: ['m1'] } });
    const owner = await scene.client(repo.root);
    await waitForLease(repo.root);
    return { root: repo.root, log, owner };
  }

  async function overMcp(owner: SharedClient, file: string): Promise<Attempt> {
    const started = Date.now();
    try {
      const result = await outcome(owner.client, 'spawn', { profile: 'worker', file }, HUNG_MS);
      return { over: 'mcp', file, ms: Date.now() - started, code: result.code ?? 'answered', text: result.text.slice(0, 300) };
    } catch (error) {
      return { over: 'mcp', file, ms: Date.now() - started, code: 'hung', text: String(error) };
    }
  }

  async function overRest(root: string, file: string): Promise<Attempt> {
    const started = Date.now();
    try {
      const res = await rest(root, 'POST', '/api/v1/harness/spawn', { profile: 'worker', file }, HUNG_MS);
      const code = res.status === 200 ? 'answered' : (res.json<{ error?: { code?: string } }>().error?.code ?? `status ${res.status}`);
      return { over: 'rest', file, ms: Date.now() - started, code, status: res.status, text: res.text.slice(0, 300) };
    } catch (error) {
      return { over: 'rest', file, ms: Date.now() - started, code: 'hung', text: String(error) };
    }
  }

  function expectRefusedAtOnce(attempt: Attempt): void {
    const what = `spawn over ${attempt.over} with file ${attempt.file}: ${attempt.text}`;
    expect.soft(attempt.code, what).toBe('not_regular_file');
    expect.soft(attempt.ms, `${what} took ${attempt.ms} ms`).toBeLessThan(REFUSAL_MS);
    if (attempt.over === 'rest' && attempt.code === 'not_regular_file') expect.soft(attempt.status, what).toBe(422);
    if (attempt.code === 'not_regular_file') expect.soft(attempt.text, what).toContain(attempt.file);
  }

  it('refuses six concurrent spawns whose file is a FIFO or a socket at once with not_regular_file, and every route answers within 2 s afterwards', async () => {
    const { root, log, owner } = await checkout();
    const attempts = await Promise.all([
      overMcp(owner, FIFO),
      overRest(root, FIFO),
      overMcp(owner, FIFO),
      overRest(root, FIFO),
      overMcp(owner, SOCKET),
      overRest(root, SOCKET),
    ]);
    for (const attempt of attempts) expectRefusedAtOnce(attempt);

    const timed = async (what: string, run: () => Promise<boolean>): Promise<void> => {
      const started = Date.now();
      const answered = await run().then(
        (ok) => (ok ? 'answered' : 'answered wrongly'),
        (error: unknown) => String(error),
      );
      const ms = Date.now() - started;
      expect.soft(answered, what).toBe('answered');
      expect.soft(ms, `${what} answered in ${ms} ms`).toBeLessThan(ROUTE_MS);
    };
    const within = ROUTE_MS + 1_000;
    await timed('GET /v1/models', async () => {
      const res = await rest(root, 'GET', '/v1/models', undefined, within);
      return res.status === 200 && res.json().data.some((model: { id: string }) => model.id === 'm1');
    });
    await timed('GET /api/v1/objects', async () => (await rest(root, 'GET', '/api/v1/objects', undefined, within)).status === 200);
    await timed('GET /api/v1/harness/sessions', async () => (await rest(root, 'GET', '/api/v1/harness/sessions', undefined, within)).status === 200);
    await timed('session_list over MCP', async () => {
      const result = await callTool(owner.client, 'majordomus_session_list', {}, within);
      return !result.isError && Array.isArray(result.structured?.sessions);
    });
    expect(await invocations(log), 'the agent CLI never ran for a FIFO or a socket').toEqual([]);
  });

  it('holds no live-session slot for a refused FIFO or socket: with max_live_sessions 1 a normal spawn runs afterwards', async () => {
    const { log, owner } = await checkout({ max_live_sessions: 1 });
    expectRefusedAtOnce(await overMcp(owner, FIFO));
    expectRefusedAtOnce(await overMcp(owner, SOCKET));
    expect(await invocations(log), 'the agent CLI never ran for a FIFO or a socket').toEqual([]);
    // A path out of the checkout is refused with its own code, and holds no slot either.
    const outside = await outcome(owner.client, 'spawn', { profile: 'worker', file: '../elsewhere.md' }, HUNG_MS);
    expect(outside.code).toBe('outside_checkout');
    expect(outside.text).toContain('../elsewhere.md');
    const spawned = await callTool(owner.client, 'majordomus_spawn', { profile: 'worker', file: 'prompts/ok.md', wait: true }, 30_000);
    expect(spawned.isError, `a normal spawn afterwards: ${spawned.text.slice(0, 300)}`).toBe(false);
    expect(spawned.structured).toMatchObject({ status: 'exited', exitCode: 0, answer: 'fine' });
    expect((await answer(owner.client, 'session_list')).sessions).toHaveLength(1);
  });
});
