/**
 * What a bridge does when its server goes — black-box, built executable, temporary git
 * repositories, real pipes and sockets, `kill -9` for a crash. Covers:
 * - a bridged client whose server is killed takes the role over: its next call succeeds, it keeps
 *   the same peer id, the lease names the bridge's pid, and it logs the stale lease it found
 *   (invariants 2 and 6);
 * - with two bridges, one takes over and the other re-attaches to it; both keep working, keep
 *   their ids and see each other (invariants 1 and 2);
 * - a bridge keeps its peer id even when a newcomer joined the new server before the bridge
 *   re-attached (invariant 2: "the client notices nothing");
 * - a peer that cannot serve the layer with its own options (`--strict`, the layer now degraded)
 *   answers its client's next call with JSON-RPC -32603 naming why — never silence (invariant 2);
 * - a bridge whose server stops answering without dying (SIGSTOP) in the middle of a tool call
 *   answers that call with -32603 saying it was not re-sent because it may have run — never an
 *   answer from a second run, never endless silence (invariant 2); at the real timers: the
 *   bridge's 5 s watchdog and the election's 5 s wait for the lock holder's lease;
 * - a bridge with two requests in flight when its server stops answering (SIGSTOP) elects once,
 *   not twice, and answers both (re-sent: they change nothing); with both timers shortened
 *   (MAJORDOMUS_TEST_WATCHDOG_MS, MAJORDOMUS_TEST_LIVE_SERVER_WAIT_MS) — the count is the point;
 * - a superseded server (its lease replaced by another process's, naming a live server of this
 *   checkout) answers `leaseholder: false`, refuses new sessions with 409 `lease_lost`, keeps the
 *   sessions it has, and leaves the other lease in place when it ends (invariant 1);
 * - no tracked file changes outside what the test commits itself (invariant 5).
 */
import { rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { git } from '../helpers/fixture-repo.js';
import { isAlive, waitFor } from '../helpers/wait.js';
import {
  ATTACHED,
  LEASE_SCHEMA,
  RULE_URI,
  SERVING_HTTP,
  SHARED_LAYER,
  Scene,
  countOf,
  idsOf,
  initializeBody,
  leasePath,
  bearer,
  openHttpSession,
  peersVia,
  toolOutput,
  postMcp,
  readLeaseDoc,
  rootOf,
  waitForLease,
  waitForSettledLease,
  waitForLog,
  type LeaseDoc,
  type SharedClient,
} from '../helpers/shared.js';

const GIT_IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false'];

/** The test settings that make a bridge give up on a hung server sooner (docs/MCP.md, "Environment"). */
const FAST_HANG_TIMERS = { MAJORDOMUS_TEST_WATCHDOG_MS: '500', MAJORDOMUS_TEST_LIVE_SERVER_WAIT_MS: '500' };

async function killHard(client: { pid: number }): Promise<void> {
  process.kill(client.pid, 'SIGKILL');
  await waitFor(() => !isAlive(client.pid), { what: `pid ${client.pid} to die`, timeoutMs: 20_000 });
}

describe('takeover when the server goes', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('lets a bridged client whose server was killed go on with the same peer id, as the new server', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const before = await waitForLease(repo.root);
    const bridge = await scene.client(repo.root, { name: 'bridged' });
    await waitForLog(bridge.stderr, ATTACHED);
    expect((await peersVia(bridge.client)).you).toBe('p2');

    await killHard(owner);
    expect((await readLeaseDoc(repo.root))?.token, 'kill -9 leaves the lease').toBe(before.token);

    const after = await peersVia(bridge.client);
    expect(after.you).toBe('p2');
    expect(after.peers).toEqual([expect.objectContaining({ id: 'p2', client: { name: 'bridged', version: '1.0.0' } })]);
    // Logged before the answer, but stderr is its own pipe: wait for the lines.
    await waitForLog(bridge.stderr, 'lost the shared server');
    await waitForLog(bridge.stderr, `found a stale lease at ${leasePath(repo.root)}`);
    await waitForLog(bridge.stderr, `took over as the shared server of ${repo.root}`);
    await waitForLog(bridge.stderr, SERVING_HTTP);

    const lease = await waitForLease(repo.root, (doc) => doc.token !== before.token);
    expect(lease.pid).toBe(bridge.pid);
    expect(lease.url).not.toBe(before.url);
    // GET / counts what the main thread last told the HTTP thread, which it does asynchronously.
    await waitFor(async () => (await rootOf(lease.url as string)).peers === 1, { what: 'GET / of the new server to count its one peer', intervalMs: 100 });
    expect(await rootOf(lease.url as string)).toMatchObject({ leaseholder: true, peers: 1 });
    const got = await toolOutput<{ uri: string }>(bridge.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
  });

  it('re-attaches one bridge to the other when that one won the lease, and both keep working', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const before = await waitForLease(repo.root);
    const a = await scene.client(repo.root, { name: 'bridge-a' });
    const b = await scene.client(repo.root, { name: 'bridge-b' });
    await waitForLog(a.stderr, ATTACHED);
    await waitForLog(b.stderr, ATTACHED);

    await killHard(owner);
    // Both call at once: both elect, exactly one wins.
    const [fromA, fromB] = await Promise.all([peersVia(a.client), peersVia(b.client)]);
    expect(fromA.you).toBe('p2');
    expect(fromB.you).toBe('p3');

    const lease = await waitForLease(repo.root, (doc) => doc.token !== before.token);
    const winner: SharedClient = lease.pid === a.pid ? a : b;
    const loser: SharedClient = winner === a ? b : a;
    expect([a.pid, b.pid]).toContain(lease.pid);
    await waitForLog(winner.stderr, `took over as the shared server of ${repo.root}`);
    // The loser's re-attach is its last line of the election: once it is there, so would be a takeover.
    await waitForLog(loser.stderr, `attached to the shared server ${lease.url} as a bridge`);
    expect(loser.stderr()).not.toContain('took over as the shared server');

    for (const client of [a, b]) {
      const seen = await peersVia(client.client);
      expect(idsOf(seen)).toEqual(['p2', 'p3']);
      expect(Object.fromEntries(seen.peers.map((p) => [p.id, p.client.name]))).toEqual({ p2: 'bridge-a', p3: 'bridge-b' });
    }
    const got = await toolOutput<{ uri: string }>(loser.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
  });

  it('keeps a bridge its peer id even when a newcomer joined the new server before it re-attached', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const before = await waitForLease(repo.root);
    const a = await scene.client(repo.root, { name: 'bridge-a' });
    const b = await scene.client(repo.root, { name: 'bridge-b' });
    await waitForLog(b.stderr, ATTACHED);
    expect((await peersVia(b.client)).you).toBe('p3');
    // Settled: the saved board records the three ids issued before the server dies.
    await waitForSettledLease(repo.root, (board) => board.peers_issued === 3);

    await killHard(owner);
    expect((await peersVia(a.client)).you).toBe('p2'); // a takes over; b has not noticed yet
    await waitForLease(repo.root, (doc) => doc.token !== before.token && doc.pid === a.pid);
    const newcomer = await scene.client(repo.root, { name: 'newcomer' });
    await waitForLog(newcomer.stderr, ATTACHED);

    const fromB = await peersVia(b.client);
    expect(fromB.you, 'bridge-b had p3 before the takeover').toBe('p3');
    const names = Object.fromEntries(fromB.peers.map((p) => [p.id, p.client.name]));
    expect(names.p3).toBe('bridge-b');
    expect(new Set(Object.keys(names)).size).toBe(3);
  });

  it('answers -32603 naming why when the peer taking over cannot serve the layer with its own options', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    await waitForLease(repo.root);
    const strict = await scene.client(repo.root, { name: 'strict-bridge', globalArgs: ['--strict'] });
    await waitForLog(strict.stderr, ATTACHED);

    // The layer degrades on disk: a tracked rule whose front matter is not YAML.
    await writeFile(join(repo.root, '.ai/repo/rules/broken.md'), '---\ntitle: [unclosed\n---\n# Broken\n');
    await git(repo.root, ['add', '.ai/repo/rules/broken.md']);
    await git(repo.root, [...GIT_IDENTITY, 'commit', '-q', '--no-verify', '-m', 'a broken rule']);
    await scene.rebaseline(repo);
    // The live server keeps the index it built at start: the bridge is still served.
    expect((await peersVia(strict.client)).you).toBe('p2');

    await killHard(owner);
    let refused: unknown;
    try {
      await strict.client.callTool({ name: 'majordomus_peers', arguments: {} });
    } catch (error) {
      refused = error;
    }
    expect(refused, 'the call must fail, not hang or succeed').toBeInstanceOf(McpError);
    const error = refused as McpError;
    expect(error.code).toBe(-32603);
    expect(error.message).toContain('--strict refuses the degraded layer');
    expect(error.message).toContain('.ai/repo/rules/broken.md');
    await waitForLog(strict.stderr, 'cannot serve the layer');
    // It released what it took: nothing holds the checkout now, and the next call says the same.
    expect(await readLeaseDoc(repo.root)).toBeNull();
    await expect(strict.client.callTool({ name: 'majordomus_list', arguments: {} })).rejects.toMatchObject({ code: -32603 });
  });

  it('refuses new sessions with lease_lost but keeps its sessions once its lease names another live server', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const lease = await waitForLease(repo.root);
    const url = lease.url as string;
    const { session } = await openHttpSession(url, 'http-agent', lease.token);
    scene.defer(async () => {
      await session.close();
    });
    const described = await rootOf(url);
    expect(described.leaseholder).toBe(true);

    // Another server of this checkout, as the probe sees one: it answers GET / for this
    // repository, takes its own lease's token and says it holds the lease (the state two racing
    // elections can leave behind).
    const rivalToken = 'f'.repeat(32);
    const rival: Server = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      const authorized = req.headers.authorization === `Bearer ${rivalToken}`;
      res.end(JSON.stringify({ name: 'majordomus', repository_id: described.repository_id, leaseholder: true, authorized }));
    });
    await new Promise<void>((resolve) => rival.listen(0, '127.0.0.1', resolve));
    scene.defer(() => new Promise<void>((resolve) => {
      rival.close(() => resolve());
      rival.closeAllConnections();
    }));
    const other: LeaseDoc = {
      schema: LEASE_SCHEMA,
      pid: process.pid,
      token: rivalToken,
      root: repo.root,
      url: `http://127.0.0.1:${(rival.address() as { port: number }).port}`,
      started_at: new Date().toISOString(),
      version: lease.version,
    };
    const temp = `${leasePath(repo.root)}.test.tmp`;
    await writeFile(temp, `${JSON.stringify(other, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, leasePath(repo.root));

    await waitFor(async () => (await rootOf(url)).leaseholder === false, { what: 'GET / to answer leaseholder: false', timeoutMs: 20_000, intervalMs: 200 });
    await waitForLog(owner.stderr, /superseded: .*names another live server/);

    const refused = await postMcp(url, initializeBody('too-late'), bearer(lease.token));
    expect(refused.status).toBe(409);
    expect(refused.json().error.code).toBe('lease_lost');
    expect(refused.headers['mcp-session-id']).toBeUndefined();

    // What was attached stays served.
    expect(idsOf(await session.peers())).toEqual(['p1', 'p2']);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1', 'p2']);

    await session.close();
    await owner.close();
    // Its release removes only its own lease, never the one that replaced it.
    expect(await readLeaseDoc(repo.root)).toEqual(other);
  });

  // At the real timers (no MAJORDOMUS_TEST_*): the one test that waits the watchdog and the wait for a hung lock holder out.
  it('answers a tool call its hung server may have run with -32603 saying it was not re-sent', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    await waitForLease(repo.root);
    const bridge = await scene.client(repo.root, { name: 'bridged' });
    await waitForLog(bridge.stderr, ATTACHED);
    expect((await peersVia(bridge.client)).you).toBe('p2');

    // The server hangs: its socket still accepts, nothing answers. The bridge's watchdog (5 s)
    // and probe (2 s) call it lost, but the call reached it and may have run: a tool call is
    // never re-sent, so the client must get an error saying so, never a (second) answer.
    process.kill(owner.pid, 'SIGSTOP');
    scene.defer(() => {
      if (isAlive(owner.pid)) process.kill(owner.pid, 'SIGKILL');
    });
    let refused: unknown;
    try {
      // Generous: 7 s of watchdog and probe, then an election on a loaded machine. The SDK's
      // own timeout (-32001) would mean the bridge said nothing at all.
      const answer = await bridge.client.callTool({ name: 'majordomus_peers', arguments: {} }, undefined, { timeout: 40_000 });
      refused = new Error(`the call was answered: ${JSON.stringify(answer)}`);
    } catch (error) {
      refused = error;
    }
    expect(refused, String(refused)).toBeInstanceOf(McpError);
    const error = refused as McpError;
    expect(error.code, error.message).toBe(-32603);
    expect(error.message).toContain('the shared server went away while handling this request');
    expect(error.message).toContain('stopped answering');
    expect(error.message).toContain('it was not re-sent because it may have run');
    // It elected again before answering: the next call is served, under the same peer id.
    expect((await peersVia(bridge.client)).you).toBe('p2');
  }, 60_000);

  it('elects once, not twice, when two requests in flight both find the server gone, and answers both', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    await waitForLease(repo.root);
    // The hung server is found after 0.5 s instead of 5 s, and its lock, held by a stopped
    // process, is given up on after 0.5 s; the probes keep their real 2 s deadline.
    const bridge = await scene.client(repo.root, { name: 'bridged', env: FAST_HANG_TIMERS });
    await waitForLog(bridge.stderr, ATTACHED);
    expect((await peersVia(bridge.client)).you).toBe('p2');

    process.kill(owner.pid, 'SIGSTOP');
    scene.defer(() => {
      if (isAlive(owner.pid)) process.kill(owner.pid, 'SIGKILL');
    });
    // Both hang on the stopped server until the watchdog gives up on it; they change nothing, so
    // both are re-sent to whoever serves after the election.
    const [tools, resources] = await Promise.all([
      bridge.client.listTools(undefined, { timeout: 40_000 }),
      bridge.client.listResources(undefined, { timeout: 40_000 }),
    ]);
    expect(tools.tools.length).toBeGreaterThan(0);
    expect(resources.resources.map((r) => r.uri)).toContain(RULE_URI);
    await waitForLog(bridge.stderr, `took over as the shared server of ${repo.root}`);
    expect(countOf(bridge.stderr(), /lost the shared server/g), bridge.stderr()).toBe(1);
    expect(countOf(bridge.stderr(), /took over as the shared server/g)).toBe(1);
    expect((await peersVia(bridge.client)).you).toBe('p2');
  }, 60_000);
});
