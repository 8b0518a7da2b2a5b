/**
 * How `majordomus serve` starts and stops, black-box in a temporary git repository. Covers:
 * - stdin EOF, SIGTERM and SIGINT each end it with exit 0 (no signal death, no abort) within a
 *   generous bound, even with an idle keep-alive connection or an open MCP session; stderr holds
 *   no "Assertion failed" or "Aborted"; the port is closed afterwards;
 * - a taken --port falls back to a free one and both are logged; the new one serves;
 * - --port 70000 is a usage error (exit 2) naming the option;
 * - --host 0.0.0.0 warns that the host is not loopback, serves on 127.0.0.1 too, and stops cleanly.
 */
import { Agent } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { rawRequest, startServe, type ExitStatus } from '../helpers/serve.js';
import { withTimeout } from '../helpers/wait.js';
import { LAYER_FILES, serveFixture, type Served } from './http-fixture.js';

/** Generous: a loaded two-core machine; the product's own grace before dying of a signal is 5 s. */
const EXIT_BOUND_MS = 20_000;

function expectNoCrash(stderr: string): void {
  expect(stderr).not.toMatch(/Assertion failed|Aborted|core dumped|FATAL ERROR|Segmentation fault/i);
}

/**
 * The exit, or a failure naming `what` once EXIT_BOUND_MS have passed. The bound is the whole
 * timing check: a signal's graceful stop that overran the product's grace would show as a death
 * by the signal, which the tests reject with `signal: null`.
 */
function exitWithin(exited: Promise<ExitStatus>, what: string): Promise<ExitStatus> {
  return withTimeout(exited, EXIT_BOUND_MS, what);
}

async function refusesConnections(port: number): Promise<boolean> {
  try {
    await rawRequest({ port, path: '/', timeoutMs: 5_000 });
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

describe('serve shutdown', () => {
  let served: Served | undefined;
  let agent: Agent | undefined;

  afterEach(async () => {
    agent?.destroy();
    agent = undefined;
    await served?.close();
    served = undefined;
  });

  /** A request over a keep-alive agent, whose socket is then left idle in the agent's pool. */
  async function idleKeepAlive(port: number): Promise<void> {
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const res = await rawRequest({ port, path: '/api/v1/objects', agent });
    expect(res.status).toBe(200);
    expect(res.headers.connection ?? 'keep-alive').not.toBe('close');
    // The socket goes back to the pool on the next tick once the response ended.
    await new Promise((resolve) => setImmediate(resolve));
    expect(Object.values(agent.freeSockets).flat().length).toBe(1);
  }

  it('ends with exit 0 on stdin EOF, even with an idle keep-alive connection open', async () => {
    served = await serveFixture();
    const { server } = served;
    await idleKeepAlive(server.port);
    server.child.stdin.end();
    const exit = await exitWithin(server.exited, 'serve to exit after stdin EOF');
    expect({ code: exit.code, signal: exit.signal }, server.stderr()).toEqual({ code: 0, signal: null });
    expectNoCrash(server.stderr());
    expect(await refusesConnections(server.port)).toBe(true);
  });

  it('ends with exit 0 on SIGTERM, even with an idle keep-alive connection open', async () => {
    served = await serveFixture();
    const { server } = served;
    await idleKeepAlive(server.port);
    server.child.kill('SIGTERM');
    const exit = await exitWithin(server.exited, 'serve to exit after SIGTERM');
    expect({ code: exit.code, signal: exit.signal }, server.stderr()).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toContain('SIGTERM received');
    expectNoCrash(server.stderr());
    expect(await refusesConnections(server.port)).toBe(true);
  });

  it('ends with exit 0 on SIGINT', async () => {
    served = await serveFixture();
    const { server } = served;
    expect((await rawRequest({ port: server.port, path: '/' })).status).toBe(200);
    server.child.kill('SIGINT');
    const exit = await exitWithin(server.exited, 'serve to exit after SIGINT');
    expect({ code: exit.code, signal: exit.signal }, server.stderr()).toEqual({ code: 0, signal: null });
    expectNoCrash(server.stderr());
  });

  it('ends with exit 0 on stdin EOF while an MCP session is open', async () => {
    served = await serveFixture();
    const { server } = served;
    const res = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: { 'Content-Type': 'application/json', ...server.auth },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lingering', version: '1' } },
      }),
    });
    expect(res.status).toBe(200);
    expect((await rawRequest({ port: server.port, path: '/' })).json().peers).toBe(1);
    server.child.stdin.end();
    const exit = await exitWithin(server.exited, 'serve to exit after stdin EOF');
    expect({ code: exit.code, signal: exit.signal }, server.stderr()).toEqual({ code: 0, signal: null });
    expectNoCrash(server.stderr());
  });
});

describe('serve options', () => {
  let repo: FixtureRepo | undefined;
  let blocker: Server | undefined;
  const stops: Array<() => Promise<unknown>> = [];

  afterEach(async () => {
    while (stops.length > 0) await (stops.pop() as () => Promise<unknown>)();
    if (blocker) await new Promise<void>((resolve) => (blocker as Server).close(() => resolve()));
    blocker = undefined;
    await repo?.cleanup();
    repo = undefined;
  });

  it('falls back to a free port when --port is taken, logging both', async () => {
    repo = await createFixtureRepo({ files: LAYER_FILES });
    const server = createServer();
    blocker = server;
    const taken = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
    const serve = await startServe({ cwd: repo.root, args: ['--port', String(taken)] });
    stops.push(() => serve.stop());
    expect(serve.port).not.toBe(taken);
    expect(serve.stderr()).toContain(`port ${taken} is taken; bound ${serve.port} instead`);
    expect(serve.stderr()).toContain(`serving http://127.0.0.1:${serve.port}`);
    const root = (await rawRequest({ port: serve.port, path: '/' })).json();
    expect(root.surfaces.mcp).toBe(`http://127.0.0.1:${serve.port}/mcp`);
    expect(await serve.stop()).toEqual({ code: 0, signal: null });
  });

  it('refuses --port 70000 as a usage error (exit 2) naming the option', async () => {
    repo = await createFixtureRepo({ files: LAYER_FILES });
    const result = await runCli(['serve', '--port', '70000'], { cwd: repo.root });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--port');
    expect(result.stderr).toContain('70000');
    expect(result.stdout).toBe('');
  });

  it('warns that --host 0.0.0.0 is not a loopback address, serves on 127.0.0.1 too, and stops with exit 0', async () => {
    repo = await createFixtureRepo({ files: LAYER_FILES });
    const serve = await startServe({ cwd: repo.root, args: ['--host', '0.0.0.0', '--port', '0'] });
    stops.push(() => serve.stop());
    expect(serve.stderr()).toMatch(/warn.*0\.0\.0\.0.*not a loopback/);
    expect(serve.url).toBe(`http://0.0.0.0:${serve.port}`);
    // Off loopback every request needs the lease's token.
    expect((await rawRequest({ port: serve.port, path: '/api/v1/health/live' })).status).toBe(401);
    expect((await rawRequest({ port: serve.port, path: '/api/v1/health/live', headers: serve.auth })).status).toBe(200);
    // The guard still refuses a foreign Host on a non-loopback bind.
    expect((await rawRequest({ port: serve.port, path: '/', headers: { Host: 'evil.example' } })).status).toBe(403);
    expect(await serve.stop()).toEqual({ code: 0, signal: null });
    expectNoCrash(serve.stderr());
  });
});
