/**
 * Both HTTP engines serve the same routes the same way. The HTTP thread serves with
 * uWebSockets.js, or with node:http (and `ws` for the page's WebSocket) where uWS cannot load;
 * `MAJORDOMUS_HTTP_ENGINE` forces one. The other HTTP files run under whichever the suite's
 * environment picks (run them once more with MAJORDOMUS_HTTP_ENGINE=node exported: README); this
 * file runs both every time. For each engine, forced, `serve` on port 0:
 * - `GET /` names the engine; a REST query answers with Content-Length and Cache-Control: no-store;
 *   HEAD answers GET's head with the same Content-Length and no body;
 * - a body over 1 MiB is drained and refused with 413 too_large on a connection that stays usable;
 *   a Host that does not name the server is 403 forbidden;
 * - `/mcp`: initialize, then a tool call carrying a progressToken answered as an SSE stream whose
 *   last event is the response; GET opens the session's stream;
 * - `/live`: a hello with the token gets the page's state; an upgrade from another Origin is 403;
 * - stopping closes every connection: an open session stream and an open page socket end, and the
 *   server exits 0.
 * Where uWebSockets.js cannot load (a copy of the package whose `@based/uws` has no binary):
 * - `serve` falls back to node:http, logging why once, and `GET /` says `node`;
 * - `MAJORDOMUS_HTTP_ENGINE=uws` refuses to start: exit 12, MAJ_HTTP_ENGINE, no lease left.
 */
import { cp, mkdir, readdir, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, runCli } from '../helpers/cli.js';
import { openEventStream, sseMessages } from '../helpers/event-stream.js';
import { createFixtureRepo, makeTempDir } from '../helpers/fixture-repo.js';
import { uwsLoads } from '../helpers/node-runtimes.js';
import { BUILT_PARTS, copyPackage } from '../helpers/package-copy.js';
import { rawRequest, startServe, type ServeProcess } from '../helpers/serve.js';
import { BASE_ENV, LEASE_RELATIVE, openHttpSession } from '../helpers/shared.js';
import { withTimeout } from '../helpers/wait.js';
import { LAYER_FILES, serveFixture } from './http-fixture.js';

const SSE = 'text/event-stream';

/** Opens the page's WebSocket; answers it once open, or the status that refused the upgrade. */
function openLive(port: number, origin?: string): Promise<{ ws: WebSocket } | { refused: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`, origin ? { origin } : {});
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      res.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

function nextFrame(ws: WebSocket): Promise<{ type: string }> {
  return new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)) as { type: string })));
}

describe.each([
  { engine: 'uws', runs: uwsLoads() },
  { engine: 'node', runs: true },
])('the $engine engine', ({ engine, runs }) => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it.runIf(runs)('serves REST, HEAD, 413, the Host guard, /mcp with an SSE answer, /live, and closes every connection on stop', async () => {
    const served = await serveFixture({ env: { ...BASE_ENV, MAJORDOMUS_HTTP_ENGINE: engine } });
    cleanups.push(() => served.close());
    const { server } = served;
    const port = server.port;

    const root = await rawRequest({ port, path: '/' });
    expect(root.json()).toMatchObject({ name: 'majordomus', engine });
    expect(server.stderr()).not.toMatch(/cannot load/);

    // REST, then HEAD: the same head, no body.
    const objects = await rawRequest({ port, path: '/api/v1/objects' });
    expect(objects.status).toBe(200);
    expect(objects.headers['content-length']).toBe(String(objects.body.byteLength));
    expect(objects.headers['cache-control']).toBe('no-store');
    const head = await rawRequest({ port, method: 'HEAD', path: '/api/v1/objects' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(objects.body.byteLength));
    expect(head.body.byteLength).toBe(0);

    // A body over 1 MiB is drained, then refused; the kept-alive connection serves the next request.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    const tooLarge = await rawRequest({ port, method: 'POST', path: '/mcp', agent, headers: { 'Content-Type': 'application/json', ...server.auth }, body: Buffer.alloc(2 * 1024 * 1024, 0x20) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: { code: 'too_large' } });
    expect((await rawRequest({ port, path: '/', agent })).status).toBe(200);
    const foreign = await rawRequest({ port, path: '/', headers: { Host: `evil.example:${port}` } });
    expect(foreign.status).toBe(403);
    expect(foreign.json()).toMatchObject({ error: { code: 'forbidden' } });

    // /mcp: a tool call that asked for progress is answered as an event stream.
    const { session } = await openHttpSession(server.loopbackUrl, `engine-${engine}`, server.token);
    const streamed = await session.post('tools/call', { name: 'majordomus_info', arguments: {}, _meta: { progressToken: 'p-1' } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toBe(SSE);
    expect(streamed.headers['content-length']).toBeUndefined();
    expect(sseMessages(streamed.text).at(-1)).toMatchObject({ result: { structuredContent: { name: 'majordomus' } } });
    const stream = await openEventStream({ port, headers: { Accept: SSE, ...server.auth, 'Mcp-Session-Id': session.sessionId } });
    expect(stream.status).toBe(200);

    // /live: the page's socket says hello and gets the state; another Origin cannot open it.
    const live = await openLive(port);
    if (!('ws' in live)) throw new Error(`the /live upgrade was refused with ${live.refused}`);
    const state = nextFrame(live.ws);
    live.ws.send(JSON.stringify({ type: 'hello', token: server.token }));
    expect((await withTimeout(state, 10_000, 'the page state')).type).toBe('state');
    expect(await openLive(port, 'http://evil.example')).toEqual({ refused: 403 });

    // Stopping closes the open stream and the page socket, and exits 0.
    const wsClosed = new Promise<number>((resolve) => live.ws.once('close', (code) => resolve(code)));
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    await withTimeout(stream.ended, 10_000, 'the session stream to end');
    expect(await withTimeout(wsClosed, 10_000, 'the page socket to close')).toBeGreaterThanOrEqual(1000);
    expect(server.stderr()).not.toMatch(/majordomus error:/);
  }, 120_000);
});

/**
 * A copy of the built package whose `@based/uws` has its loader but no binary: uWS cannot load
 * there under any runtime, as under Node 24 on a glibc older than 2.38.
 */
async function packageWithoutUwsBinary(into: string): Promise<string> {
  const root = await copyPackage(into, BUILT_PARTS, { nodeModules: false });
  const ours = join(PACKAGE_ROOT, 'node_modules');
  const theirs = join(root, 'node_modules');
  await mkdir(join(theirs, '@based', 'uws'), { recursive: true });
  for (const name of await readdir(ours)) if (name !== '@based') await symlink(join(ours, name), join(theirs, name));
  for (const name of await readdir(join(ours, '@based'))) if (name !== 'uws') await symlink(join(ours, '@based', name), join(theirs, '@based', name));
  for (const file of ['package.json', 'uws.js', 'ESM_wrapper.mjs']) await cp(join(ours, '@based', 'uws', file), join(theirs, '@based', 'uws', file));
  return join(root, 'dist', 'src', 'cli', 'main.js');
}

describe('where uWebSockets.js cannot load', () => {
  let main: string;
  let removeCopy: (() => Promise<void>) | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    const dir = await makeTempDir('majordomus-no-uws-');
    removeCopy = () => dir.cleanup();
    main = await packageWithoutUwsBinary(dir.path);
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  afterAll(async () => {
    await removeCopy?.();
  });

  it('serves with node:http, logging once why uWebSockets.js cannot load, and GET / says node', async () => {
    const repo = await createFixtureRepo({ files: LAYER_FILES });
    cleanups.push(() => repo.cleanup());
    const server: ServeProcess = await startServe({ cwd: repo.root, main, env: { ...BASE_ENV, MAJORDOMUS_HTTP_ENGINE: undefined } });
    cleanups.push(() => server.stop());
    expect((await rawRequest({ port: server.port, path: '/' })).json()).toMatchObject({ name: 'majordomus', engine: 'node' });
    expect((await rawRequest({ port: server.port, path: '/api/v1/objects' })).status).toBe(200);
    const lines = server.stderr().split('\n').filter((line) => line.includes('uWebSockets.js cannot load on this system'));
    expect(lines).toEqual([expect.stringMatching(/^majordomus warn: uWebSockets\.js cannot load on this system \(Node\.js \d+: .*uws_.*\.node.*\): serving with node:http$/)]);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('refuses MAJORDOMUS_HTTP_ENGINE=uws with exit 12 and MAJ_HTTP_ENGINE, leaving no lease', async () => {
    const repo = await createFixtureRepo({ files: LAYER_FILES });
    cleanups.push(() => repo.cleanup());
    const result = await runCli(['serve', '--port', '0'], { cwd: repo.root, main, env: { ...BASE_ENV, MAJORDOMUS_HTTP_ENGINE: 'uws' } });
    expect(result.code, result.stderr).toBe(12);
    expect(result.stderr).toMatch(/majordomus error: MAJ_HTTP_ENGINE: MAJORDOMUS_HTTP_ENGINE=uws, but uWebSockets\.js cannot load on this system/);
    expect(result.stderr).not.toContain('MAJ_PORT_UNAVAILABLE');
    expect(existsSync(join(repo.root, LEASE_RELATIVE))).toBe(false);
  });
});
