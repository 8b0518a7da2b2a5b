/**
 * The live page's feed without a server: sockets are recorders, the state's parts are counted
 * calls. Covers the hello (token checked, whole state once), coalescing (a burst of changes is one
 * update with the changed part only; nothing is built while no page listens; a change during a
 * build gets one more), backpressure (a backed-up page is skipped, then gets the whole state), the
 * socket bound, the hello deadline, and frames that are not what the page sends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE, LiveFeed, MAX_PAGE_SOCKETS, type LiveConnection, type LiveSocket } from '../../../src/page/feed.js';
import type { PageHarnessState, PageHostState } from '../../../src/page/state.js';
import { waitFor } from '../../helpers/wait.js';
import { pageUsage } from '../../../src/page/harness-state.js';
import { UsageTable } from '../../../src/tasks/usage.js';

const TOKEN = 'a'.repeat(32);

class Recorder implements LiveSocket {
  frames: Array<Record<string, unknown>> = [];
  ended: { code: number; reason: string } | null = null;
  buffered = 0;
  send(text: string): boolean {
    this.frames.push(JSON.parse(text) as Record<string, unknown>);
    return true;
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  end(code: number, reason: string): void {
    this.ended = { code, reason };
  }
}

function hostState(peers: number): PageHostState {
  return {
    generation: 1,
    objects: 0,
    diagnostics: [],
    diagnosticCount: 0,
    startedAt: new Date(0).toISOString(),
    pid: 1,
    peers: Array.from({ length: peers }, (_, i) => ({ id: `p${i + 1}`, client: { name: 'c', version: '1' }, transport: 'http' as const, connected_at: '', last_seen_seconds_ago: 0 })),
    claims: [],
    conflicts: [],
    messages: [],
    inbox: { unread: 0, messages: [] },
  };
}

function setup(options: { slowHost?: () => Promise<void> } = {}) {
  const calls = { host: 0, harness: 0 };
  let peers = 0;
  const feed = new LiveFeed({
    token: TOKEN,
    server: () => ({ name: 'majordomus', version: '1', repository_id: 'r', leaseholder: true, url: 'http://127.0.0.1:1', docs: 'http://127.0.0.1:1/docs' }),
    host: async () => {
      calls.host += 1;
      await options.slowHost?.();
      return hostState(peers);
    },
    harness: async (): Promise<PageHarnessState> => {
      calls.harness += 1;
      return { sessions: [], tasks: [], usage: pageUsage(new UsageTable().snapshot()) };
    },
    coalesceMs: 5,
  });
  return { feed, calls, setPeers: (n: number) => (peers = n) };
}

function hello(connection: LiveConnection, token = TOKEN): void {
  connection.message(JSON.stringify({ type: 'hello', token }));
}

describe('the live feed', () => {
  const feeds: LiveFeed[] = [];
  afterEach(() => {
    for (const feed of feeds.splice(0)) feed.close();
  });

  it('refuses a wrong or missing token with an error frame and closes, building nothing', async () => {
    const { feed, calls } = setup();
    feeds.push(feed);
    for (const frame of [{ type: 'hello', token: 'b'.repeat(32) }, { type: 'hello' }, { type: 'hello', token: 42 }]) {
      const socket = new Recorder();
      feed.open(socket).message(JSON.stringify(frame));
      expect(socket.frames).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized' })]);
      expect(socket.ended?.code).toBe(CLOSE.policy);
    }
    expect(feed.size).toBe(0);
    expect(calls).toEqual({ host: 0, harness: 0 });
  });

  it('sends the whole state once after a hello, then one update per burst with the changed part only', async () => {
    const { feed, calls, setPeers } = setup();
    feeds.push(feed);
    const socket = new Recorder();
    hello(feed.open(socket));
    await waitFor(() => socket.frames.length === 1 || null, { what: 'the whole state' });
    expect(socket.frames[0]).toMatchObject({ type: 'state', server: { leaseholder: true }, host: { peers: [] }, harness: { sessions: [] } });
    setPeers(3);
    for (let i = 0; i < 20; i += 1) feed.changed('host');
    await waitFor(() => socket.frames.length === 2 || null, { what: 'one update' });
    expect(socket.frames[1]).toMatchObject({ type: 'update', host: { peers: [{ id: 'p1' }, { id: 'p2' }, { id: 'p3' }] } });
    expect(socket.frames[1]).not.toHaveProperty('harness');
    // The harness change is built after the burst's build (builds are spaced): had the burst made a
    // second host update, it would come before this one.
    feed.changed('harness');
    await waitFor(() => socket.frames.some((frame) => 'harness' in (frame as object) && (frame as { type: string }).type === 'update') || null, { what: 'the harness update' });
    expect(socket.frames).toHaveLength(3);
    expect(Object.keys(socket.frames[2] as object).sort()).toEqual(['harness', 'type']);
    expect(calls).toEqual({ host: 2, harness: 2 });
  });

  it('builds nothing while no page has said hello', async () => {
    const { feed, calls } = setup();
    feeds.push(feed);
    const socket = new Recorder();
    feed.open(socket);
    feed.changed('host');
    feed.changed('harness');
    // Longer than a coalesced build would take (coalesce 10 ms): nothing may have been built.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toEqual({ host: 0, harness: 0 });
    expect(socket.frames).toEqual([]);
  });

  it('builds once more after a build when a change came in during it', async () => {
    let release: () => void = () => undefined;
    let gate: Promise<void> | null = null;
    const { feed, calls } = setup({ slowHost: () => gate ?? Promise.resolve() });
    feeds.push(feed);
    const socket = new Recorder();
    hello(feed.open(socket));
    await waitFor(() => socket.frames.length === 1 || null, { what: 'the whole state' });
    gate = new Promise<void>((resolve) => (release = resolve));
    feed.changed('host');
    await waitFor(() => calls.host === 2 || null, { what: 'the second build to start' });
    feed.changed('host'); // during the build
    feed.changed('host');
    gate = null;
    release();
    await waitFor(() => socket.frames.length === 3 || null, { what: 'the build after it' });
    expect(calls.host).toBe(3);
  });

  it('skips a backed-up page and sends it the whole state once it drains', async () => {
    const { feed, calls } = setup();
    feeds.push(feed);
    const socket = new Recorder();
    const connection = feed.open(socket);
    hello(connection);
    await waitFor(() => socket.frames.length === 1 || null, { what: 'the whole state' });
    socket.buffered = 2 * 1024 * 1024;
    feed.changed('host');
    await waitFor(() => calls.host === 2 || null, { what: 'the update to be built' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.frames).toHaveLength(1);
    socket.buffered = 0;
    connection.drained();
    await waitFor(() => socket.frames.length === 2 || null, { what: 'the state after draining' });
    expect(socket.frames[1]).toMatchObject({ type: 'state' });
  });

  it('answers frames that are not the page\'s with an error each and keeps the socket', async () => {
    const { feed } = setup();
    feeds.push(feed);
    const socket = new Recorder();
    const connection = feed.open(socket);
    connection.message('{oops');
    connection.message('"hello"');
    connection.message(JSON.stringify({ type: 'subscribe' }));
    connection.message(null);
    connection.message(JSON.stringify({ type: 'ping' }));
    expect(socket.frames.map((f) => f.code)).toEqual(['invalid_json', 'invalid_message', 'invalid_message', 'binary_frame', 'unauthorized']);
    expect(socket.ended).toBeNull();
    hello(connection);
    await waitFor(() => socket.frames.length === 6 || null, { what: 'the whole state' });
    hello(connection);
    connection.message(JSON.stringify({ type: 'ping' }));
    expect(socket.frames.slice(6)).toEqual([expect.objectContaining({ code: 'invalid_message' }), { type: 'pong' }]);
  });

  it('takes at most MAX_PAGE_SOCKETS pages, and a page that never says hello is closed', async () => {
    const feed = new LiveFeed({
      token: TOKEN,
      server: () => ({ name: 'majordomus', version: '1', repository_id: 'r', leaseholder: true, url: '', docs: '' }),
      host: async () => hostState(0),
      harness: null,
      helloTimeoutMs: 20,
    });
    feeds.push(feed);
    const sockets = Array.from({ length: MAX_PAGE_SOCKETS }, () => new Recorder());
    for (const socket of sockets) feed.open(socket);
    expect(feed.full).toBe(true);
    const extra = new Recorder();
    feed.open(extra);
    expect(extra.ended?.code).toBe(CLOSE.overloaded);
    await waitFor(() => sockets.every((s) => s.ended !== null) || null, { what: 'the hello deadline' });
    expect(sockets[0]?.frames).toEqual([expect.objectContaining({ code: 'hello_timeout' })]);
    expect(feed.size).toBe(0);
  });
});

describe('the live feed under churn', () => {
  it('starts builds at least minBuildIntervalMs apart however many changes come', async () => {
    const starts: number[] = [];
    const feed = new LiveFeed({
      token: TOKEN,
      server: () => ({ name: 'majordomus', version: '1', repository_id: 'r', leaseholder: true, url: '', docs: '' }),
      host: async () => {
        starts.push(performance.now());
        return hostState(0);
      },
      harness: null,
      coalesceMs: 1,
      minBuildIntervalMs: 30,
    });
    const socket = new Recorder();
    hello(feed.open(socket));
    // Changes every 2 ms until a few builds have started: on a loaded machine a fixed window may
    // hold only two, which says nothing about their spacing.
    const deadline = performance.now() + 20_000;
    while (starts.length < 4 && performance.now() < deadline) {
      feed.changed('host');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await waitFor(() => socket.frames.at(-1)?.type === 'update', { what: 'the last build\'s update' });
    feed.close();
    expect(starts.length).toBeGreaterThan(2);
    const gaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
    // Timers may fire a hair early; never a burst of builds.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(28);
    expect(socket.frames.at(-1)).toMatchObject({ type: 'update' });
  });
});
