/**
 * The shared server against a damaged lease, a hung server and hostile frames — black-box, the
 * built executable in temporary git repositories, real pipes and sockets. Covers:
 * - a live owner whose lease is overwritten with junk, emptied, deleted with the whole local half
 *   (`git clean -xfd`), or replaced by a lease naming a dead server publishes its own again and is
 *   never superseded; the next client attaches to it: one server, one board (no split brain);
 * - a bridge's announcement survives a takeover: the successor restores it from the saved board
 *   when the bridge re-attaches, and a later overlapping announcement names it;
 * - a bridge whose server hangs ends on its client's EOF within a bound, whatever is in flight;
 * - arguments nested 10,000 deep through a bridge get -32602 naming the request, and the bridge
 *   answers the next request (pings included);
 * - on stdio, a frame over 1 MiB (a 50 MB search query) is refused with -32600 naming its id and
 *   does not hold the next request up; a search query over its bound is -32602.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git } from '../helpers/fixture-repo.js';
import { isAlive, waitFor, withTimeout } from '../helpers/wait.js';
import {
  ATTACHED,
  EXIT_TIMEOUT_MS,
  idsOf,
  leasePath,
  peersVia,
  readBoardDoc,
  Scene,
  SHARED_LAYER,
  toolOutput,
  waitForLease,
  waitForLog,
  type LeaseDoc,
} from '../helpers/shared.js';

/** A nesting no capability takes: 10,000 arrays deep. */
const DEEP = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;

describe('a damaged lease never splits the checkout', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  const damages: Array<[string, (root: string, lease: LeaseDoc) => Promise<void>]> = [
    ['overwritten with junk', async (root) => writeFile(join(root, '.ai/local/state/mcp/server.json'), '{garbage')],
    ['emptied', async (root) => writeFile(join(root, '.ai/local/state/mcp/server.json'), '')],
    ['deleted with the whole local half by git clean -xfd', async (root) => void (await git(root, ['clean', '-xfdq']))],
    [
      'replaced by a lease naming a dead server',
      async (root, lease) =>
        writeFile(join(root, '.ai/local/state/mcp/server.json'), JSON.stringify({ ...lease, pid: 4_194_321, token: 'e'.repeat(32), url: 'http://127.0.0.1:9' })),
    ],
  ];

  it.each(damages)('publishes its lease again when it is %s, and the next client attaches to the same server', async (_what, damage) => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const lease = await waitForLease(repo.root);
    const bridge = await scene.client(repo.root, { name: 'bridge' });
    await waitForLog(bridge.stderr, ATTACHED);

    await damage(repo.root, lease);
    const restored = await waitForLease(repo.root, (doc) => doc.token === lease.token, 20_000);
    expect(restored).toEqual(lease);
    await waitForLog(owner.stderr, /the lease .* (is gone|is empty|is corrupt|is stale).*; publishing it again/);
    expect(owner.stderr()).not.toContain('superseded');

    const later = await scene.client(repo.root, { name: 'later' });
    const attached = await waitForLog(later.stderr, ATTACHED);
    expect(attached[1]).toBe(lease.url);
    expect(later.stderr()).not.toMatch(/serving http/);
    const seen = await peersVia(later.client);
    expect(seen.you).toBe('p3');
    expect(idsOf(seen)).toEqual(['p1', 'p2', 'p3']);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1', 'p2', 'p3']);
  });
});

describe('announcements across a takeover', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('gives a re-attaching bridge its announcement back, so a later overlap still names it', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    const before = await waitForLease(repo.root);
    // Both bridges ping often, so each re-attaches soon after the server dies.
    const env = { MAJORDOMUS_PING_MS: '300' };
    const writer = await scene.client(repo.root, { name: 'writer', env });
    const reviewer = await scene.client(repo.root, { name: 'reviewer', env });
    await waitForLog(reviewer.stderr, ATTACHED);
    const announced = await toolOutput(writer.client, 'majordomus_announce', { intent: 'rewrite the parser', paths: ['src/parser'] });
    expect(announced.peer.id).toBe('p2');
    await waitFor(async () => (await readBoardDoc(repo.root))?.peers.some((p) => p.id === 'p2'), { what: 'the board to save the announcement', timeoutMs: 20_000 });

    process.kill(owner.pid, 'SIGKILL');
    await waitFor(() => !isAlive(owner.pid), { what: 'the owner to die', timeoutMs: 20_000 });
    await waitForLease(repo.root, (doc) => doc.token !== before.token, 30_000);
    // Both re-attach (their pings do it); the writer finds its own announcement again.
    await waitFor(async () => (await peersVia(reviewer.client)).peers.length === 2, { what: 'both bridges on the new server', timeoutMs: 30_000, intervalMs: 200 });
    const seen = await peersVia(reviewer.client);
    expect(seen.peers.find((p) => p.id === 'p2')?.announcement).toMatchObject({ intent: 'rewrite the parser', paths: ['src/parser'] });

    const overlap = await toolOutput(reviewer.client, 'majordomus_announce', { intent: 'fix a parser bug', paths: ['src/parser/lexer.ts'] });
    expect(overlap.overlaps).toEqual([{ peer: 'p2', path: 'src/parser/lexer.ts', their_path: 'src/parser' }]);
  });
});

describe('a bridge and a hung or hostile exchange', () => {
  const scene = new Scene();
  afterEach(async () => {
    await scene.cleanup();
  });

  it('ends on its client\'s EOF within a bound while a request waits on a server that hangs', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('owner');
    await waitForLease(repo.root);
    const bridge = scene.raw(repo.root);
    await bridge.initialize('bridge');
    await waitForLog(() => bridge.stderr(), ATTACHED);

    process.kill(owner.pid, 'SIGSTOP');
    scene.defer(() => {
      if (isAlive(owner.pid)) process.kill(owner.pid, 'SIGCONT');
    });
    bridge.cli.send(bridge.line('tools/call', { name: 'majordomus_peers', arguments: {} }).line);
    bridge.endInput();
    const exit = await withTimeout(bridge.cli.exited, EXIT_TIMEOUT_MS, 'the bridge to end on EOF with a request in flight');
    expect(exit).toEqual({ code: 0, signal: null });
    process.kill(owner.pid, 'SIGCONT');
  });

  it('answers arguments nested 10,000 deep with -32602 and goes on answering, through a bridge', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner' });
    await waitForLease(repo.root);
    const bridge = scene.raw(repo.root);
    await bridge.initialize('bridge');
    await waitForLog(() => bridge.stderr(), ATTACHED);

    const line = `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"x","paths":${DEEP}}}}`;
    const answer = JSON.parse(await bridge.exchange(line, 'deep', 20_000));
    expect(answer).toMatchObject({ id: 'deep', error: { code: -32602, message: expect.stringContaining('deeper than 64') } });
    expect(await bridge.request('ping')).toMatchObject({ result: {} });
    expect(idsOf(await bridge.peers())).toEqual(['p1', 'p2']);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1', 'p2']);
  });

  it('refuses a 50 MB frame on stdio with -32600 naming its id, and answers the next request at once', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('owner');
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 'huge', method: 'tools/call', params: { name: 'majordomus_search', arguments: { query: 'x'.repeat(50 * 1024 * 1024) } } });
    const refused = JSON.parse(await owner.exchange(huge, 'huge', 30_000));
    expect(refused).toEqual({ jsonrpc: '2.0', id: 'huge', error: { code: -32600, message: expect.stringContaining('over the 1048576-byte limit') } });
    expect(await owner.request('ping')).toMatchObject({ result: {} });
    // Under the frame limit but over the query's own bound: invalid params, answered at once.
    const long = await owner.request('tools/call', { name: 'majordomus_search', arguments: { query: 'rule '.repeat(100_000) } });
    expect(long.error).toMatchObject({ code: -32602, message: expect.stringContaining('query') });
  });
});

describe('a lease path that is not a file', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('takes over a FIFO at the lease path instead of hanging on it', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    await mkdir(join(repo.root, '.ai/local/state/mcp'), { recursive: true });
    execFileSync('mkfifo', [leasePath(repo.root)]);
    const client = await scene.client(repo.root, { name: 'after-fifo' });
    await waitForLog(client.stderr, /found a corrupt lease at .* \(not a regular file\); taking it over/);
    const lease = await waitForLease(repo.root);
    expect(lease.pid).toBe(client.pid);
    expect((await peersVia(client.client)).you).toBe('p1');
  });
});
