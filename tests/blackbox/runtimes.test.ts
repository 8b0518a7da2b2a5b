/**
 * The built executable under each Node.js release line we support: the one running the tests and
 * those of tests/helpers/node-runtimes.versions (22 and 24, installed offline-capable from npm's
 * `node-<platform>-<arch>` packages once per node_modules). Under each, in a fixture repository:
 * - `serve` on port 0 answers `GET /` naming its HTTP engine: uWebSockets.js under Node 20 and 22
 *   (their binaries need glibc 2.27); under Node 24 whichever loads here — uWS where its binary
 *   loads (glibc 2.38), else node:http, with the reason logged once;
 * - a REST call (`GET /api/v1/objects`) lists the layer;
 * - `/mcp` with the lease's token: initialize, then a tool call answered from the pool;
 * - a bridge (`majordomus mcp` started after the server, same runtime) speaks stdio: initialize
 *   and a tool call through it, and it sees both peers; it exits 0 when its client leaves;
 * - the server stops with exit 0 and leaves no lease.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { currentRuntime, installedRuntimes, runtimeVersions, RUNTIMES_INSTALL_TIMEOUT_MS, uwsLoads, type NodeRuntime } from '../helpers/node-runtimes.js';
import { rawRequest } from '../helpers/serve.js';
import { ATTACHED, BASE_ENV, LEASE_RELATIVE, openHttpSession, RawMcp } from '../helpers/shared.js';
import { withTimeout } from '../helpers/wait.js';
import { OBJECT_URIS, serveFixture, type Served } from './http-fixture.js';

const execFileAsync = promisify(execFile);

/** Each runtime's processes get the suite's environment; the engine is left to the server. */
const ENV = { ...BASE_ENV, MAJORDOMUS_HTTP_ENGINE: undefined };

/** The current runtime, then each listed one (a listed version equal to the current is run once). */
const LINES = [currentRuntime().version, ...runtimeVersions().filter((version) => version !== currentRuntime().version)];

describe('the executable under each supported Node.js', () => {
  let runtimes: NodeRuntime[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    runtimes = [currentRuntime(), ...(await installedRuntimes())];
  }, RUNTIMES_INSTALL_TIMEOUT_MS);

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it.each(LINES)('serves REST, /mcp and a bridge under Node.js %s, naming its HTTP engine', async (version) => {
    const runtime = runtimes.find((candidate) => candidate.version === version) as NodeRuntime;
    expect(runtime, `Node.js ${version} is installed`).toBeDefined();
    const { stdout } = await execFileAsync(runtime.node, ['--version']);
    expect(stdout.trim()).toBe(`v${version}`);

    const served: Served = await serveFixture({ node: runtime.node, env: ENV });
    cleanups.push(() => served.close());
    const { server } = served;
    const url = server.loopbackUrl;

    // The engine: uWS under 20 and 22 (binaries for glibc 2.27); under 24 whichever loads here.
    const root = (await rawRequest({ port: server.port, path: '/' })).json<{ name: string; engine: string }>();
    const loads = runtime.major === 20 || runtime.major === 22 ? true : uwsLoads(runtime.node);
    expect(root).toMatchObject({ name: 'majordomus', engine: loads ? 'uws' : 'node' });
    const fallback = server.stderr().match(/uWebSockets\.js cannot load on this system \(.+\): serving with node:http/g) ?? [];
    expect(fallback.length, server.stderr()).toBe(loads ? 0 : 1);
    if (!loads && process.platform === 'linux') expect(fallback[0]).toMatch(new RegExp(`its binary for Node\\.js ${runtime.major} needs GLIBC_2\\.\\d+`));

    // REST.
    const objects = await rawRequest({ port: server.port, path: '/api/v1/objects' });
    expect(objects.status, objects.text).toBe(200);
    expect(objects.json<{ objects: Array<{ uri: string }> }>().objects.map((o) => o.uri).sort()).toEqual([...OBJECT_URIS].sort());

    // /mcp with the lease's token: initialize, a tool call (the pool answers it).
    const { session, initialize } = await openHttpSession(url, `runtime-${runtime.major}`, server.token);
    expect(initialize.result.serverInfo.name).toBe('majordomus');
    const listed = await session.request('tools/call', { name: 'majordomus_list', arguments: { kind: 'rule' } });
    expect(listed.result.isError ?? false, JSON.stringify(listed)).toBe(false);
    expect(listed.result.structuredContent.objects.length).toBe(2);

    // A bridge, started after the server, under the same runtime.
    const bridge = new RawMcp(spawnCli(['mcp'], { cwd: served.repo.root, env: ENV, node: runtime.node }));
    cleanups.push(() => bridge.cli.stop());
    const bridged = await bridge.initialize(`bridge-${runtime.major}`);
    expect(bridged.result.serverInfo.name).toBe('majordomus');
    expect(bridge.stderr()).toMatch(ATTACHED);
    const peers = await bridge.request('tools/call', { name: 'majordomus_peers', arguments: {} });
    expect(peers.error, JSON.stringify(peers)).toBeUndefined();
    const names = (peers.result.structuredContent.peers as Array<{ client: { name: string } }>).map((peer) => peer.client.name).sort();
    expect(names).toEqual([`bridge-${runtime.major}`, `runtime-${runtime.major}`]);
    bridge.endInput();
    expect(await withTimeout(bridge.cli.exited, 20_000, 'the bridge to exit')).toEqual({ code: 0, signal: null });

    expect(await session.close()).toBe(204);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(existsSync(join(served.repo.root, LEASE_RELATIVE))).toBe(false);
    expect(server.stderr()).not.toMatch(/majordomus error:/);
  }, 180_000);
});
