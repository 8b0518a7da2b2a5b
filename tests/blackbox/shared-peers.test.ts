/**
 * One shared server per checkout, seen by its peers — black-box, with the built executable in a
 * temporary git repository, over real pipes and a real socket. Covers:
 * - two `mcp` clients in one checkout make one server and two peers (p1 stdio owner, p2 bridged):
 *   each sees both with its own id and client name, learns about the other in `initialize`, and an
 *   announcement reports the overlapping paths of the other (invariants 1 and 4);
 * - a client speaking MCP over HTTP itself, at the URL the lease names, gets a session and a peer
 *   id, is seen by the stdio clients as a peer, and ends its session with DELETE (invariant 4);
 * - a bridge is byte-transparent: the same request line gets the same response bytes from the
 *   owner's stdout and from a bridge's stdout (invariant 4: peers are a projection like the rest),
 *   a tool call carrying a progress token included (the bridge reads that answer as an event
 *   stream and relays its response);
 * - an idle HTTP session expires with its peer, while a bridge that pings keeps its own
 *   (invariant 2: the bridge's session survives silence);
 * - a bridge whose session expired anyway (no ping in time) re-attaches to the same server on
 *   its client's next call, with the same peer id (invariant 2);
 * - no tracked file changes in any of them (invariant 5).
 */
import { stat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import {
  ATTACHED,
  RULE_URI,
  SERVING_HTTP,
  SHARED_LAYER,
  Scene,
  countOf,
  idsOf,
  leasePath,
  openHttpSession,
  peersVia,
  toolOutput,
  readLeaseDoc,
  waitForLease,
  waitForSettledLease,
  waitForLog,
  type PeersAnswer,
} from '../helpers/shared.js';

type Announced = { peer: { id: string }; overlaps: Array<{ peer: string; path: string; their_path: string }> };

describe('peers of one shared server', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('makes one server of two clients, and each sees both peers with its own id and name', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'claude-code' });
    await waitForLog(owner.stderr, SERVING_HTTP);
    const peer = await scene.client(repo.root, { name: 'codex' });
    const attached = await waitForLog(peer.stderr, ATTACHED);
    expect(peer.stderr()).not.toMatch(SERVING_HTTP);

    const lease = await waitForSettledLease(repo.root, (board) => board.peers_issued === 2);
    expect(lease).toEqual({
      schema: 'majordomus-mcp-lease/v1',
      pid: owner.pid,
      token: expect.stringMatching(/^\S{16,}$/),
      root: repo.root,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      started_at: expect.any(String),
      version: expect.any(String),
      // The manifest the server validated, as lstat saw it: dev, inode, size, mtime and ctime (ns).
      manifest: expect.stringMatching(/^\d+:\d+:\d+:\d+:\d+$/),
    });
    expect(Number.isFinite(Date.parse(lease.started_at))).toBe(true);
    expect((await stat(leasePath(repo.root))).mode & 0o777).toBe(0o600);
    expect(attached[1]).toBe(lease.url);

    const fromOwner = await peersVia(owner.client);
    const fromPeer = await peersVia(peer.client);
    expect(fromOwner.you).toBe('p1');
    expect(fromPeer.you).toBe('p2');
    for (const answer of [fromOwner, fromPeer]) {
      expect(answer.peers.map((p) => ({ id: p.id, name: p.client.name, transport: p.transport })).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: 'p1', name: 'claude-code', transport: 'stdio' },
        { id: 'p2', name: 'codex', transport: 'http' },
      ]);
    }
    // The later client learnt about the first before its first tool call.
    const instructions = peer.client.getInstructions() ?? '';
    expect(instructions).toContain('You are peer p2.');
    expect(instructions).toContain('- p1 (client "claude-code" "1.0.0", stdio)');
    expect(instructions).toContain(`Shared server: ${lease.url}`);
  });

  it('answers an announcement with the overlapping paths of the other peer, and shows it to everyone', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'claude-code' });
    await waitForLog(owner.stderr, SERVING_HTTP);
    const peer = await scene.client(repo.root, { name: 'gemini-cli' });
    await waitForLog(peer.stderr, ATTACHED);

    const first = await toolOutput<Announced>(owner.client, 'majordomus_announce', { intent: 'refactor the sources', paths: ['src'] });
    expect(first.overlaps).toEqual([]);
    const second = await toolOutput<Announced>(peer.client, 'majordomus_announce', { intent: 'fix the answer', paths: ['./src/index.ts', 'docs'] });
    expect(second.peer.id).toBe('p2');
    expect(second.overlaps).toEqual([{ peer: 'p1', path: 'src/index.ts', their_path: 'src' }]);

    const seen: PeersAnswer = await peersVia(owner.client);
    const announced = Object.fromEntries(seen.peers.map((p) => [p.id, p.announcement && { intent: p.announcement.intent, paths: p.announcement.paths }]));
    expect(announced).toEqual({
      p1: { intent: 'refactor the sources', paths: ['src'] },
      p2: { intent: 'fix the answer', paths: ['docs', 'src/index.ts'] },
    });

    // A third client is told in initialize what each peer announced.
    const third = await scene.client(repo.root, { name: 'opencode' });
    await waitForLog(third.stderr, ATTACHED);
    const instructions = third.client.getInstructions() ?? '';
    expect(instructions).toContain('You are peer p3.');
    expect(instructions).toContain('- p1 (client "claude-code" "1.0.0", stdio) announced the intent "refactor the sources" on paths "src"');
    expect(instructions).toContain('- p2 (client "gemini-cli" "1.0.0", http) announced the intent "fix the answer" on paths "docs", "src/index.ts"');
  });

  it('gives a client speaking MCP over HTTP at the lease URL a session and a peer id the stdio clients see', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'claude-code' });
    const lease = await waitForLease(repo.root);
    const bridge = await scene.client(repo.root, { name: 'codex' });
    await waitForLog(bridge.stderr, ATTACHED);

    const { session, initialize } = await openHttpSession(lease.url as string, 'http-agent', lease.token);
    scene.defer(async () => {
      await session.close();
    });
    expect(session.peerId).toBe('p3');
    expect(initialize.result.serverInfo.name).toBe('majordomus');
    expect(initialize.result.instructions).toContain('You are peer p3.');
    expect(initialize.result.instructions).toContain(`MCP ${lease.url}/mcp`);

    const own = await session.peers();
    expect(own.you).toBe('p3');
    expect(idsOf(own)).toEqual(['p1', 'p2', 'p3']);
    const got = await session.request('tools/call', { name: 'majordomus_get', arguments: { uri: RULE_URI } });
    expect(got.result.structuredContent.uri).toBe(RULE_URI);

    for (const client of [owner, bridge]) {
      const seen = await peersVia(client.client);
      const http = seen.peers.find((p) => p.id === 'p3');
      expect(http, JSON.stringify(seen)).toMatchObject({ client: { name: 'http-agent' }, transport: 'http' });
    }

    // DELETE ends the session: the session id is refused afterwards, and the peer leaves the
    // board (the HTTP thread tells the board after answering the DELETE, so wait for it).
    expect(await session.close()).toBe(204);
    const after = await session.post('ping');
    expect(after.status).toBe(404);
    expect(after.json().error.code).toBe('session_not_found');
    await waitFor(async () => idsOf(await peersVia(owner.client)).join() === 'p1,p2', { what: 'p3 to leave the board', intervalMs: 200 });
  });

  it('relays through a bridge the very bytes the owner writes for the same request line', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = scene.raw(repo.root);
    await owner.initialize('same-client');
    await waitForLog(owner.stderr.bind(owner), SERVING_HTTP);
    const bridge = scene.raw(repo.root);
    await bridge.initialize('same-client');
    await waitForLog(bridge.stderr.bind(bridge), ATTACHED);

    const lines: Array<[string, string | number | null]> = [
      [JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/list' }), 11],
      [JSON.stringify({ jsonrpc: '2.0', id: 'get', method: 'tools/call', params: { name: 'majordomus_get', arguments: { uri: RULE_URI } } }), 'get'],
      [JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'resources/read', params: { uri: RULE_URI } }), 13],
      [JSON.stringify({ jsonrpc: '2.0', id: 14, method: 'resources/list' }), 14],
      [JSON.stringify({ jsonrpc: '2.0', id: 15, method: 'tools/call', params: { name: 'majordomus_search', arguments: { query: 'modules' } } }), 15],
      // Refusals travel the same way: an unknown method, an unknown tool, an unknown object.
      [JSON.stringify({ jsonrpc: '2.0', id: 16, method: 'no/such/method' }), 16],
      [JSON.stringify({ jsonrpc: '2.0', id: 17, method: 'tools/call', params: { name: 'majordomus_nothing', arguments: {} } }), 17],
      [JSON.stringify({ jsonrpc: '2.0', id: 18, method: 'tools/call', params: { name: 'majordomus_get', arguments: { uri: 'majordomus://rule/none' } } }), 18],
      ['{"jsonrpc":"2.0","id":19,"method":"tools/list"', null],
      // Asking for progress: over the bridge these are answered as event streams.
      [JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'majordomus_get', arguments: { uri: RULE_URI }, _meta: { progressToken: 'p-20' } } }), 20],
      [JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'majordomus_search', arguments: { limit: 'many' }, _meta: { progressToken: 21 } } }), 21],
    ];
    for (const [line, id] of lines) {
      const fromOwner = await owner.exchange(line, id);
      const fromBridge = await bridge.exchange(line, id);
      expect(fromBridge, line).toBe(fromOwner);
    }
    // After the refusals and the unparsable line the bridge still serves: the same call again
    // gets a second, new answer (exchange waits for a line written after the request).
    const again = await bridge.exchange(lines[1]?.[0] as string, 'get');
    expect(JSON.parse(again).result.structuredContent.uri).toBe(RULE_URI);
    expect(bridge.answersTo('get')).toHaveLength(2);
  });

  it('expires a silent HTTP session with its peer while a pinging bridge keeps its own', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const idleMs = 3_000; // ten pings of margin on a loaded machine
    const owner = await scene.client(repo.root, { name: 'owner', env: { MAJORDOMUS_IDLE_SESSION_MS: String(idleMs) } });
    const lease = await waitForLease(repo.root);
    const bridge = await scene.client(repo.root, { name: 'pinging-bridge', env: { MAJORDOMUS_PING_MS: '300' } });
    await waitForLog(bridge.stderr, ATTACHED);
    // Taken before the session's last request, so the expiry is at least idleMs after it.
    const silentSince = Date.now();
    const { session } = await openHttpSession(lease.url as string, 'silent-agent', lease.token);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1', 'p2', 'p3']);

    // The silent session goes; the bridge, silent on its client's side too, stays.
    await waitFor(async () => !idsOf(await peersVia(owner.client)).includes('p3'), {
      what: 'the silent HTTP session to expire',
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    expect(Date.now() - silentSince).toBeGreaterThanOrEqual(idleMs);
    expect(idsOf(await peersVia(owner.client))).toEqual(['p1', 'p2']);
    const expired = await session.post('ping');
    expect(expired.status).toBe(404);
    expect(expired.json().error.code).toBe('session_not_found');

    // Stay silent on the bridge's client for three expiries: its pings keep the session.
    await waitFor(
      async () => {
        expect(idsOf(await peersVia(owner.client))).toContain('p2');
        return Date.now() - silentSince > 3 * idleMs;
      },
      { what: 'three idle expiries to pass', timeoutMs: 20_000, intervalMs: 250 },
    );
    const own = await peersVia(bridge.client);
    expect(own.you).toBe('p2');
    expect(bridge.stderr()).not.toContain('lost the shared server');
    expect((await readLeaseDoc(repo.root))?.pid).toBe(owner.pid);
    // A new initialize is still welcome (the server holds the lease): a session and a new peer.
    const { session: fresh } = await openHttpSession(lease.url as string, 'late-agent', lease.token);
    scene.defer(async () => {
      await fresh.close();
    });
    expect(fresh.peerId).toBe('p4');
    expect((await fresh.peers()).you).toBe('p4');
  });

  it('re-attaches a bridge whose session expired to the same server, keeping its peer id', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await scene.client(repo.root, { name: 'owner', env: { MAJORDOMUS_IDLE_SESSION_MS: '1000' } });
    const lease = await waitForLease(repo.root);
    // The default ping (20 s) is far slower than this server's expiry.
    const bridge = await scene.client(repo.root, { name: 'sleepy-bridge' });
    await waitForLog(bridge.stderr, ATTACHED);
    expect((await peersVia(bridge.client)).you).toBe('p2');
    await waitFor(async () => !idsOf(await peersVia(owner.client)).includes('p2'), {
      what: 'the bridge session to expire',
      timeoutMs: 30_000,
      intervalMs: 200,
    });

    const again = await peersVia(bridge.client);
    expect(again.you).toBe('p2');
    expect(idsOf(again)).toEqual(['p1', 'p2']);
    await waitForLog(bridge.stderr, 'lost the shared server: the server lost this session');
    // The second attach closes its re-election: once it is there, so would be a takeover.
    await waitFor(() => countOf(bridge.stderr(), ATTACHED) === 2, { what: 'the bridge to log its second attach' });
    expect(bridge.stderr()).not.toContain('took over');
    expect((await readLeaseDoc(repo.root))?.url).toBe(lease.url);
  });
});
