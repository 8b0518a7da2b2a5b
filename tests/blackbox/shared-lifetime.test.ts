/**
 * How long the shared server lives, and what never makes one — black-box, built executable,
 * temporary git repositories, real pipes and sockets. Covers:
 * - the owner whose client leaves first keeps serving its peers, says so, and when the last peer
 *   leaves closes the port, removes the lease and exits 0 (invariant 1: no process without a
 *   client; invariant 2: the peer keeps its answers);
 * - an owner whose client leaves with no peer attached closes and removes the lease at once;
 * - an owner waiting for its last peer still stops on SIGTERM, removing the lease (invariant 8);
 * - a taken port falls back to a free one and both are logged (invariant 1: it still serves);
 * - `serve` defers to a live server of the checkout: logs its URL, exits 0, binds nothing
 *   (invariant 1: never binds beside it);
 * - `mcp --standalone` and `mcp --inspect` touch no port and no lease: no `.ai/local`, no
 *   listening socket, no `serving http` (invariant 5); a standalone client beside a shared server
 *   is not one of its peers and leaves its lease alone;
 * - an unwritable lease location (`.ai/local/state` or `.ai/local` a regular file — the tests run
 *   as root, so permissions would not stop a write) degrades to a client served alone that says
 *   why and answers every tool (invariant 7);
 * - SIGTERM, SIGINT and SIGHUP stop the owner gracefully even with a peer attached: exit 0, lease
 *   removed, port closed; the peer then takes the role over (invariants 8 and 2);
 * - no tracked file changes in any of them (invariant 5).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { withTimeout } from '../helpers/wait.js';
import {
  ATTACHED,
  BASE_ENV,
  EXIT_TIMEOUT_MS,
  LEASE_RELATIVE,
  RULE_URI,
  SERVING_HTTP,
  SHARED_LAYER,
  Scene,
  idsOf,
  leasePath,
  listeningPorts,
  peersVia,
  toolOutput,
  readLeaseDoc,
  refusesConnections,
  rootOf,
  waitForLease,
  waitForSettledLease,
  waitForLog,
} from '../helpers/shared.js';

describe('lifetime of the shared server', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('outlives its own client while a peer is attached, then exits 0 and removes the lease when the peer leaves', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('owner-client');
    const lease = await waitForLease(repo.root);
    expect(lease.pid).toBe(owner.pid);
    const peer = await scene.client(repo.root, { name: 'peer-client' });
    await waitForLog(peer.stderr, ATTACHED);

    owner.endInput();
    await waitForLog(owner.stderr.bind(owner), /the client has gone; serving until the last peer leaves/);

    // The server still answers its peer; the owner's own session has left the board.
    const seen = await peersVia(peer.client);
    expect(seen.you).toBe('p2');
    expect(idsOf(seen)).toEqual(['p2']);
    const got = await toolOutput<{ uri: string }>(peer.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
    expect((await readLeaseDoc(repo.root))?.token).toBe(lease.token);
    expect((await rootOf(lease.url as string)).leaseholder).toBe(true);

    await peer.close();
    const exit = await withTimeout(owner.cli.exited, EXIT_TIMEOUT_MS, 'the owner to exit after the last peer left');
    expect(exit, owner.stderr()).toEqual({ code: 0, signal: null });
    expect(owner.stderr()).toContain(`closed ${lease.url} and removed the lease`);
    expect(existsSync(leasePath(repo.root))).toBe(false);
    expect(await refusesConnections(lease.url as string)).toBe(true);
  });

  it('closes at once and removes the lease when its client leaves with no peer attached', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('alone');
    const lease = await waitForLease(repo.root);
    owner.endInput();
    const exit = await withTimeout(owner.cli.exited, EXIT_TIMEOUT_MS, 'the owner to exit');
    expect(exit, owner.stderr()).toEqual({ code: 0, signal: null });
    expect(owner.stderr()).not.toContain('serving until the last peer leaves');
    expect(existsSync(leasePath(repo.root))).toBe(false);
    expect(await refusesConnections(lease.url as string)).toBe(true);
  });

  it('stops on SIGTERM while it waits for its last peer, removing the lease', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('owner-client');
    const lease = await waitForLease(repo.root);
    const peer = await scene.client(repo.root, { name: 'lingering-peer' });
    await waitForLog(peer.stderr, ATTACHED);
    owner.endInput();
    await waitForLog(owner.stderr.bind(owner), /serving until the last peer leaves/);

    process.kill(owner.pid, 'SIGTERM');
    const exit = await withTimeout(owner.cli.exited, EXIT_TIMEOUT_MS, 'the owner to exit on SIGTERM');
    expect(exit, owner.stderr()).toEqual({ code: 0, signal: null });
    expect(existsSync(leasePath(repo.root))).toBe(false);
    expect(await refusesConnections(lease.url as string)).toBe(true);
  });

  it('falls back to a free port when its port is taken and logs both', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const blocker: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      blocker.once('error', reject);
      blocker.listen(0, '127.0.0.1', () => resolve());
    });
    scene.defer(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const taken = (blocker.address() as { port: number }).port;

    const owner = scene.raw(repo.root, ['mcp', '--http-port', String(taken)]);
    await owner.initialize('fallback');
    const serving = await waitForLog(owner.stderr.bind(owner), SERVING_HTTP);
    const bound = Number(serving[2]);
    expect(bound).not.toBe(taken);
    expect(owner.stderr()).toContain(`port ${taken} is taken; bound ${bound} instead`);
    const lease = await waitForLease(repo.root);
    expect(lease.url).toBe(`http://127.0.0.1:${bound}`);
    expect(await rootOf(lease.url as string)).toMatchObject({ name: 'majordomus', leaseholder: true });
    expect(await listeningPorts(owner.pid)).toEqual([bound]);
  });

  it('lets serve defer to a live server: it logs the URL and exits 0 without binding', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    // Settled: the owner's own peer is recorded, so nothing but `serve` could change it now.
    const lease = await waitForSettledLease(repo.root, (board) => board.peers_issued === 1);

    const served = await runCli(['serve', '--port', '0'], { cwd: repo.root, env: BASE_ENV });
    expect(served.code, served.stderr).toBe(0);
    expect(served.stderr).toContain(`a server already serves this checkout: ${lease.url}`);
    expect(served.stderr).not.toMatch(SERVING_HTTP);
    expect(served.stdout).toBe('');
    expect(await readLeaseDoc(repo.root)).toEqual(lease);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1']);
  });

  it('serves a --standalone client with no port, no lease and nothing written', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const alone = await scene.client(repo.root, { standalone: true, name: 'standalone' });
    const seen = await peersVia(alone.client);
    expect(seen.you).toBe('p1');
    expect(idsOf(seen)).toEqual(['p1']);
    expect(alone.client.getInstructions()).toContain('This session is served alone');
    const got = await toolOutput<{ uri: string }>(alone.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
    expect(await listeningPorts(alone.pid)).toEqual([]);
    expect(alone.stderr()).not.toMatch(/serving http/);
    expect(existsSync(join(repo.root, '.ai/local'))).toBe(false);
  });

  it('answers mcp --inspect with no port, no lease and nothing written', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const inspected = await runCli(['mcp', '--inspect'], { cwd: repo.root, env: BASE_ENV });
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout).toContain(RULE_URI);
    expect(inspected.stdout).toContain('majordomus_peers');
    expect(`${inspected.stdout}${inspected.stderr}`).not.toMatch(/serving http/);
    expect(existsSync(join(repo.root, '.ai/local'))).toBe(false);
  });

  it('keeps a --standalone client beside a shared server off its board and its lease', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const lease = await waitForSettledLease(repo.root, (board) => board.peers_issued === 1);
    const alone = await scene.client(repo.root, { standalone: true, name: 'standalone' });
    expect(idsOf(await peersVia(alone.client))).toEqual(['p1']);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1']);
    expect((await peersVia(owner.client)).peers[0]?.client.name).toBe('owner');
    expect(alone.stderr()).not.toMatch(ATTACHED);
    expect(await listeningPorts(alone.pid)).toEqual([]);
    await alone.close();
    expect(await readLeaseDoc(repo.root)).toEqual(lease);
  });

  it.each([
    { blocked: '.ai/local/state', what: 'the state directory is a regular file' },
    { blocked: '.ai/local', what: 'the local half is a regular file' },
  ])('serves a client alone and says why when the lease cannot be written ($what)', async ({ blocked }) => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    await mkdir(join(repo.root, blocked, '..'), { recursive: true });
    await writeFile(join(repo.root, blocked), 'not a directory\n');
    await scene.rebaseline(repo);

    const alone = await scene.client(repo.root, { name: 'degraded' });
    await waitForLog(alone.stderr, /cannot use the shared server: .+; serving this client alone/);
    expect(alone.stderr()).not.toMatch(/serving http/);
    expect(alone.client.getInstructions()).toContain('This session is served alone');
    const seen = await peersVia(alone.client);
    expect(idsOf(seen)).toEqual(['p1']);
    const got = await toolOutput<{ uri: string }>(alone.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
    const listed = (await alone.client.callTool({ name: 'majordomus_list', arguments: {} })) as { isError?: boolean };
    expect(listed.isError ?? false).toBe(false);
    expect(await listeningPorts(alone.pid)).toEqual([]);
    expect(existsSync(join(repo.root, LEASE_RELATIVE))).toBe(false);

    // A second client in the same checkout is served alone as well.
    const second = await scene.client(repo.root, { name: 'degraded-too' });
    await waitForLog(second.stderr, /cannot use the shared server/);
    expect((await peersVia(second.client)).you).toBe('p1');
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'stops gracefully on %s with a peer attached: exit 0, lease removed, and the peer takes over',
    async (signal) => {
      const repo = await scene.repo({ files: SHARED_LAYER });
      const owner = scene.raw(repo.root);
      await owner.initialize('signalled');
      const lease = await waitForLease(repo.root);
      const peer = await scene.client(repo.root, { name: 'survivor' });
      await waitForLog(peer.stderr, ATTACHED);
      // A round trip through the bridge: nothing of its own (initialized) is still in flight.
      expect((await peersVia(peer.client)).you).toBe('p2');

      process.kill(owner.pid, signal);
      const exit = await withTimeout(owner.cli.exited, EXIT_TIMEOUT_MS, `the owner to exit on ${signal}`);
      expect(exit, owner.stderr()).toEqual({ code: 0, signal: null });
      expect(owner.stderr()).toContain(`${signal} received: stopping`);
      expect(owner.stderr()).not.toMatch(/Assertion failed|Aborted|core dumped/);
      expect(await readLeaseDoc(repo.root), `owner ${owner.pid}, peer ${peer.pid}\n${owner.stderr()}\n---\n${peer.stderr()}`).toBeNull();
      expect(existsSync(leasePath(repo.root))).toBe(false);
      expect(await refusesConnections(lease.url as string)).toBe(true);

      const seen = await peersVia(peer.client);
      expect(seen.you).toBe('p2');
      await waitForLog(peer.stderr, /took over as the shared server of /);
      expect((await readLeaseDoc(repo.root))?.pid).toBe(peer.pid);
    },
  );
});
