/**
 * The `/mcp` endpoint (src/http/mcp-endpoint.ts) over a fake McpBackend, called in-process.
 * Covers:
 * - initialize opens a session: the reply carries Mcp-Session-Id and the Mcp-Peer-Id the board
 *   gave; the peer hint is passed to join as the preferred id;
 * - a failed initialize opens no session, and a peer it already joined leaves again;
 * - a request without a session that is not initialize → 400 session_required;
 * - an unknown session → 404 session_not_found;
 * - a notification → 202 with an empty body;
 * - malformed JSON → 400 with a JSON-RPC -32700 body;
 * - once the lease is lost (acceptsSessions() false), a new initialize → 409 lease_lost while an
 *   open session still answers;
 * - every request of a session touches its peer;
 * - DELETE → 204, then the session is gone (404) and its peer has left;
 * - expireIdle ends the sessions idle past idleMs by the injected clock, and their peers leave;
 * - closeAll makes every peer leave.
 * Streams (Streamable HTTP):
 * - a request that asked for progress, from a client that accepts text/event-stream, is answered
 *   as SSE: each progress notification as it comes, the response last, then the end; the same
 *   request without that Accept, a request without a token, and initialize are answered as JSON;
 * - a client that leaves such a stream cancels its request (no response is written); a cancelled
 *   request answered as JSON gets 202 with no body;
 * - a session with a request under way does not expire; an open stream alone does not keep it,
 *   and ends when it expires;
 * - GET: 406 not_acceptable without the Accept, 400 session_required, 404 session_not_found; the
 *   stream opens with a comment, carries the peer's notifications and keep-alive comments; a
 *   second GET replaces the first; a client leaving detaches it; DELETE ends it.
 * (Those of a client before 2025-11-25; a resumable one's, below.)
 * Resumable streams (a session on 2025-11-25):
 * - a request (a tool call, a ping) from a client that accepts SSE is a stream, even without a
 *   progress token; it opens with a priming event (id `1-0`, retry, no data) and each event
 *   carries its id; without the Accept it is JSON, and initialize always is;
 * - a client whose connection broke mid-call does not cancel the call: GET with Last-Event-ID
 *   gets the events after that one — the rest of the progress and the response — then the end;
 * - the session's GET stream is primed too, and a GET with a Last-Event-ID of it replays what
 *   came after, as the session's stream;
 * - a Last-Event-ID the session keeps no stream for → 404 stream_not_found; a client before
 *   2025-11-25 that sends one just opens its stream.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { McpEndpoint, PEER_HEADER, SESSION_HEADER, type McpEndpointOptions } from '../../../src/http/mcp-endpoint.js';
import { isStreamed, type ReplySink, type RouteReply, type StreamedReply } from '../../../src/platform/http-exchange.js';
import type { McpBackend } from '../../../src/mcp/session.js';
import type { CallContext, CallOutcome } from '../../../src/platform/call.js';
import { waitFor } from '../../helpers/wait.js';

interface FakeBackend extends McpBackend {
  joins: Array<{ name: string; preferred: string | null }>;
  left: string[];
}

function fakeBackend(): FakeBackend {
  let issued = 0;
  const backend: FakeBackend = {
    joins: [],
    left: [],
    tools: { tools: [], capabilityOf: () => undefined, resources: [] },
    invoke: async () => ({ ok: true, json: '{}' }),
    objects: () => [],
    object: () => undefined,
    async join(client, preferred) {
      backend.joins.push({ name: client.name, preferred });
      issued += 1;
      const peerId = preferred ?? `p${issued}`;
      return { peerId, instructions: await backend.instructions(peerId) };
    },
    leave(peerId) {
      backend.left.push(peerId);
    },
    instructions: async (peerId) => `you are ${peerId}`,
  };
  return backend;
}

function setup(options: Partial<McpEndpointOptions> = {}): { endpoint: McpEndpoint; backend: FakeBackend } {
  const backend = fakeBackend();
  const endpoint = new McpEndpoint({ backend, idleMs: 60_000, maxSessions: 64, acceptsSessions: () => true, ...options });
  return { endpoint, backend };
}

function bytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
}

const initialize = (name = 'client', id = 1, protocolVersion = LATEST_PROTOCOL_VERSION) =>
  bytes({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, clientInfo: { name, version: '1.0.0' } } });
/** A protocol version before resumable streams (2025-11-25). */
const BEFORE_RESUMABLE = '2025-06-18';
const ping = (id = 2) => bytes({ jsonrpc: '2.0', id, method: 'ping' });

function header(reply: RouteReply, name: string): string | undefined {
  return reply.headers?.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
}

function json(reply: RouteReply): unknown {
  if (isStreamed(reply)) throw new Error('expected a whole body, got a stream');
  return JSON.parse(typeof reply.body === 'string' ? reply.body : Buffer.from(reply.body).toString('utf8'));
}

/** Opens a session and answers its id and peer id. */
async function open(endpoint: McpEndpoint, name = 'client', hint = '', protocolVersion = LATEST_PROTOCOL_VERSION): Promise<{ session: string; peer: string }> {
  const reply = await endpoint.post(initialize(name, 1, protocolVersion), '', hint);
  expect(reply.status).toBe(200);
  return { session: header(reply, SESSION_HEADER) ?? '', peer: header(reply, PEER_HEADER) ?? '' };
}

describe('McpEndpoint', () => {
  it('opens a session on initialize and names it and its peer in the reply headers', async () => {
    const { endpoint, backend } = setup();
    const reply = await endpoint.post(initialize('agent'), '');
    expect(reply.status).toBe(200);
    expect(header(reply, SESSION_HEADER)).toMatch(/^[0-9a-f-]{36}$/);
    expect(header(reply, PEER_HEADER)).toBe('p1');
    expect(json(reply)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'majordomus' }, instructions: 'you are p1' } });
    expect(backend.joins).toEqual([{ name: 'agent', preferred: null }]);
    expect(endpoint.size).toBe(1);
    expect(endpoint.peerOf(header(reply, SESSION_HEADER) ?? '')).toBe('p1');
  });

  it('gives each initialize its own session', async () => {
    const { endpoint } = setup();
    const a = await open(endpoint, 'a');
    const b = await open(endpoint, 'b');
    expect(a.session).not.toBe(b.session);
    expect([a.peer, b.peer]).toEqual(['p1', 'p2']);
    expect(endpoint.size).toBe(2);
  });

  it('passes the peer hint header to join as the preferred id', async () => {
    const { endpoint, backend } = setup();
    const { peer } = await open(endpoint, 'bridge', 'p7');
    expect(backend.joins).toEqual([{ name: 'bridge', preferred: 'p7' }]);
    expect(peer).toBe('p7');
  });

  it('keeps no session for an initialize that fails', async () => {
    const { endpoint, backend } = setup();
    const reply = await endpoint.post(bytes({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }), '');
    expect(reply.status).toBe(200);
    expect(header(reply, SESSION_HEADER)).toBeUndefined();
    expect(json(reply)).toMatchObject({ id: 1, error: { code: -32602 } });
    expect(endpoint.size).toBe(0);
    expect(backend.joins).toEqual([]);
  });

  it('keeps no session when joining the board fails, and answers the initialize -32603', async () => {
    const { endpoint, backend } = setup();
    backend.instructions = async () => {
      throw new Error('layer unreadable');
    };
    const reply = await endpoint.post(initialize('doomed'), '');
    expect(json(reply)).toMatchObject({ id: 1, error: { code: -32603, message: expect.stringContaining('layer unreadable') } });
    expect(header(reply, SESSION_HEADER)).toBeUndefined();
    expect(endpoint.size).toBe(0);
    expect(backend.joins.map((j) => j.name)).toEqual(['doomed']);
  });

  it('refuses a request that is not initialize without a session with 400 session_required', async () => {
    const { endpoint } = setup();
    const reply = await endpoint.post(ping(), '');
    expect(reply.status).toBe(400);
    expect(json(reply)).toMatchObject({ error: { code: 'session_required' } });
  });

  it('answers a request of an unknown session with 404 session_not_found', async () => {
    const { endpoint } = setup();
    const reply = await endpoint.post(ping(), 'no-such-session');
    expect(reply.status).toBe(404);
    expect(json(reply)).toMatchObject({ error: { code: 'session_not_found' } });
    expect(endpoint.peerOf('no-such-session')).toBeUndefined();
  });

  it('answers a request of an open session with 200 and no session headers', async () => {
    const { endpoint } = setup();
    const { session } = await open(endpoint);
    const reply = await endpoint.post(ping(5), session);
    expect(reply.status).toBe(200);
    expect(json(reply)).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    expect(header(reply, SESSION_HEADER)).toBeUndefined();
  });

  it('accepts a notification with 202 and an empty body', async () => {
    const { endpoint } = setup();
    const { session } = await open(endpoint);
    const reply = await endpoint.post(bytes({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
    expect(reply).toEqual({ status: 202, body: '' });
  });

  it('answers malformed JSON with 400 and a JSON-RPC parse error', async () => {
    const { endpoint } = setup();
    const reply = await endpoint.post(bytes('{"jsonrpc": "2.0", '), '');
    expect(reply.status).toBe(400);
    expect(json(reply)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('refuses a new session with 409 lease_lost once the lease is lost, while an open session still answers', async () => {
    let accepts = true;
    const { endpoint, backend } = setup({ acceptsSessions: () => accepts });
    const { session } = await open(endpoint);
    accepts = false;
    const refused = await endpoint.post(initialize('late'), '');
    expect(refused.status).toBe(409);
    expect(json(refused)).toMatchObject({ error: { code: 'lease_lost' } });
    expect(backend.joins.map((j) => j.name)).toEqual(['client']);
    const still = await endpoint.post(ping(9), session);
    expect(still.status).toBe(200);
    expect(json(still)).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });

  it('touches the peer on every request of its session', async () => {
    const touched: string[] = [];
    const { endpoint } = setup({ touch: (peer) => touched.push(peer) });
    const { session } = await open(endpoint);
    await endpoint.post(ping(), session);
    await endpoint.post(ping(), session);
    expect(touched).toEqual(['p1', 'p1']);
  });

  it('ends a session on DELETE with 204; the session is then unknown and its peer has left', async () => {
    const { endpoint, backend } = setup();
    const { session } = await open(endpoint);
    expect(endpoint.delete(session)).toEqual({ status: 204, body: '' });
    expect(backend.left).toEqual(['p1']);
    expect(endpoint.delete(session).status).toBe(404);
    expect((await endpoint.post(ping(), session)).status).toBe(404);
    expect(endpoint.size).toBe(0);
  });

  it('refuses a DELETE without a session with 400 session_required', () => {
    const { endpoint } = setup();
    const reply = endpoint.delete('');
    expect(reply.status).toBe(400);
    expect(json(reply)).toMatchObject({ error: { code: 'session_required' } });
  });

  it('expires the sessions idle for longer than idleMs and makes their peers leave', async () => {
    let now = 1_000_000;
    const { endpoint, backend } = setup({ idleMs: 1_000, now: () => now });
    const quiet = await open(endpoint, 'quiet');
    const busy = await open(endpoint, 'busy');
    now += 600;
    await endpoint.post(ping(), busy.session);
    now += 500;
    expect(endpoint.expireIdle()).toBe(1);
    expect(backend.left).toEqual([quiet.peer]);
    expect((await endpoint.post(ping(), quiet.session)).status).toBe(404);
    expect((await endpoint.post(ping(), busy.session)).status).toBe(200);
    now += 999;
    expect(endpoint.expireIdle()).toBe(0);
    now += 1;
    expect(endpoint.expireIdle()).toBe(1);
    expect(backend.left).toEqual([quiet.peer, busy.peer]);
    expect(endpoint.size).toBe(0);
  });

  it('counts a peerOf lookup as activity of the session', async () => {
    let now = 0;
    const { endpoint } = setup({ idleMs: 1_000, now: () => now });
    const { session } = await open(endpoint);
    now = 900;
    expect(endpoint.peerOf(session)).toBe('p1');
    now = 1_500;
    expect(endpoint.expireIdle()).toBe(0);
  });

  it('makes every peer leave on closeAll', async () => {
    const { endpoint, backend } = setup();
    await open(endpoint, 'a');
    await open(endpoint, 'b');
    await open(endpoint, 'c');
    endpoint.closeAll();
    expect(backend.left.sort()).toEqual(['p1', 'p2', 'p3']);
    expect(endpoint.size).toBe(0);
  });
});

/** A sink like the uWS adapter's: records what is written, and a client that can leave. */
interface TestSink extends ReplySink {
  text: string;
  ended: boolean;
  /** The client goes away. */
  leave(): void;
  /** The JSON-RPC messages written as `message` events, in order. */
  messages(): unknown[];
  comments(): string[];
}

function testSink(): TestSink {
  const gone = new AbortController();
  const sink: TestSink = {
    text: '',
    ended: false,
    signal: gone.signal,
    write(piece) {
      if (!sink.ended && !gone.signal.aborted) sink.text += typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8');
      return true;
    },
    end() {
      sink.ended = true;
    },
    cut() {
      sink.ended = true;
    },
    onWritable() {},
    leave: () => gone.abort(),
    messages: () =>
      sink.text
        .split('\n\n')
        .map((event) => event.replace(/^id: \d+-\d+\n/, ''))
        .filter((event) => event.startsWith('event: message\ndata: '))
        .map((event) => JSON.parse(event.slice('event: message\ndata: '.length)) as unknown),
    comments: () => [...sink.text.matchAll(/^: (.*)$/gm)].map((m) => m[1] as string),
  };
  return sink;
}

function streamed(reply: RouteReply): StreamedReply {
  if (!isStreamed(reply)) throw new Error(`expected a stream, got ${reply.status} ${String(reply.body)}`);
  expect({ status: reply.status, contentType: reply.contentType }).toEqual({ status: 200, contentType: 'text/event-stream' });
  return reply;
}

interface Follow {
  call: CallContext | undefined;
  finish(output: unknown): void;
}

/** A backend whose tool `follow` runs until finished (or until its signal aborts). */
function followBackend(): { backend: McpBackend; follows: Follow[] } {
  const follows: Follow[] = [];
  const backend: McpBackend = {
    ...fakeBackend(),
    tools: { tools: [], capabilityOf: (name) => (name === 'follow' ? 'test.follow' : undefined), resources: [] },
    invoke: (_id, _args, _caller, call) =>
      new Promise<CallOutcome>((resolve) => {
        call?.signal?.addEventListener('abort', () => resolve({ ok: true, json: '{"stopped":true}' }));
        follows.push({ call, finish: (output) => resolve({ ok: true, json: JSON.stringify(output) }) });
      }),
  };
  return { backend, follows };
}

const follow = (id: number, progressToken?: string | number) =>
  bytes({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'follow', arguments: {}, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) } });

describe('McpEndpoint streams of a client before 2025-11-25', () => {
  function streaming(options: Partial<McpEndpointOptions> = {}) {
    const { backend, follows } = followBackend();
    const endpoint = new McpEndpoint({ backend, idleMs: 60_000, maxSessions: 64, acceptsSessions: () => true, ...options });
    return { endpoint, follows };
  }
  const started = async (follows: Follow[], count: number): Promise<Follow[]> => {
    await waitFor(() => follows.length >= count, { timeoutMs: 2_000, what: `${count} call(s) to start` });
    return follows;
  };

  it('gives a session the spawn depth its initialize reported (Mcp-Spawn-Depth), and 0 — a top-level client — for a missing or malformed one', async () => {
    const { endpoint, follows } = streaming();
    const init = (id: number) => bytes({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, clientInfo: { name: 'x', version: '1' } } });
    const deep = header(await endpoint.post(init(1), '', '', false, '2'), SESSION_HEADER) as string;
    const odd = header(await endpoint.post(init(2), '', '', false, '-1'), SESSION_HEADER) as string;
    void endpoint.post(follow(3), deep, '', false);
    void endpoint.post(follow(4), odd, '', false);
    const [first, second] = await started(follows, 2);
    expect(first?.call?.depth).toBe(2);
    expect(second?.call?.depth).toBe(0);
    endpoint.closeAll();
  });

  it('answers a request that asked for progress as SSE: progress as it comes, the response last, then the end', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const reply = streamed(await endpoint.post(follow(4, 'tok'), session, '', true));
    const sink = testSink();
    reply.start(sink);
    const [call] = await started(follows, 1);
    call?.call?.onProgress?.('first line');
    expect(sink.messages()).toEqual([{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1, message: 'first line' } }]);
    call?.call?.onProgress?.('second line');
    expect(sink.ended).toBe(false);
    call?.finish({ lines: 2 });
    await waitFor(() => sink.ended, { timeoutMs: 2_000, what: 'the stream to end' });
    const messages = sink.messages();
    expect(messages).toHaveLength(3);
    expect(messages[1]).toMatchObject({ method: 'notifications/progress', params: { progress: 2, message: 'second line' } });
    expect(messages[2]).toEqual({ jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: '{"lines":2}' }], structuredContent: { lines: 2 } } });
  });

  it('answers as JSON a request from a client that does not accept SSE, one without a token, and initialize', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const noAccept = endpoint.post(follow(1, 'tok'), session, '', false);
    const noToken = endpoint.post(follow(2), session, '', true);
    const calls = await started(follows, 2);
    calls[0]?.call?.onProgress?.('nobody asked for this as a stream'); // no sink: goes nowhere
    calls[0]?.finish({ n: 1 });
    calls[1]?.finish({ n: 2 });
    expect(json(await noAccept)).toMatchObject({ id: 1, result: { structuredContent: { n: 1 } } });
    expect(json(await noToken)).toMatchObject({ id: 2, result: { structuredContent: { n: 2 } } });
    const init = bytes({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, clientInfo: { name: 'x', version: '1' }, _meta: { progressToken: 'i' } } });
    const initialized = await endpoint.post(init, '', '', true);
    expect(isStreamed(initialized)).toBe(false);
    expect(header(initialized, SESSION_HEADER)).toMatch(/\S/);
  });

  it('cancels the request of a stream its client leaves, and writes no response', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const sink = testSink();
    streamed(await endpoint.post(follow(6, 1), session, '', true)).start(sink);
    const [call] = await started(follows, 1);
    sink.leave();
    expect(call?.call?.signal?.aborted).toBe(true);
    await waitFor(() => sink.ended, { timeoutMs: 2_000, what: 'the stream to end' });
    expect(sink.messages()).toEqual([]);
  });

  it('answers a cancelled request that waited for JSON with 202 and no body', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const waiting = endpoint.post(follow(8), session);
    await started(follows, 1);
    expect(await endpoint.post(bytes({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8 } }), session)).toEqual({ status: 202, body: '' });
    expect(await waiting).toEqual({ status: 202, body: '' });
    expect(follows[0]?.call?.signal?.aborted).toBe(true);
  });

  it('does not expire a session while a request of it is under way; its open stream alone does not keep it, and ends with it', async () => {
    let now = 0;
    const { endpoint, follows } = streaming({ idleMs: 1_000, now: () => now });
    const { session } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const waiting = endpoint.post(follow(1), session);
    const [call] = await started(follows, 1);
    now = 5_000;
    expect(endpoint.expireIdle()).toBe(0);
    call?.finish({});
    await waiting;
    const sink = testSink();
    streamed(endpoint.openStream(session, true)).start(sink);
    now = 5_999;
    expect(endpoint.expireIdle()).toBe(0); // idle from the moment its request ended
    now = 6_000;
    expect(endpoint.expireIdle()).toBe(1);
    expect(sink.ended).toBe(true);
  });

  it('refuses a GET without Accept: text/event-stream (406), without a session (400) and of an unknown one (404)', async () => {
    const { endpoint } = streaming();
    const { session } = await open(endpoint);
    const refusals = [endpoint.openStream(session, false), endpoint.openStream('', true), endpoint.openStream('nope', true)];
    expect(refusals.map((reply) => [reply.status, (json(reply) as { error: { code: string } }).error.code])).toEqual([
      [406, 'not_acceptable'],
      [400, 'session_required'],
      [404, 'session_not_found'],
    ]);
  });

  it("opens the session's stream on GET: it carries the peer's notifications and keep-alives until DELETE ends it", async () => {
    const { endpoint } = streaming({ keepAliveMs: 20 });
    const { session, peer } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const sink = testSink();
    streamed(endpoint.openStream(session, true)).start(sink);
    expect(sink.comments()).toEqual(['the session stream is open']);
    expect(endpoint.notifyPeer(peer, 'notifications/message', { level: 'info', data: 'claimed src/' })).toBe(true);
    expect(endpoint.notifyPeer('p99', 'notifications/message')).toBe(false);
    expect(sink.messages()).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'claimed src/' } }]);
    await waitFor(() => sink.comments().includes('keep-alive'), { timeoutMs: 2_000, what: 'a keep-alive comment' });
    expect(endpoint.delete(session).status).toBe(204);
    expect(sink.ended).toBe(true);
  });

  it('replaces the stream on a second GET, and detaches a stream whose client left', async () => {
    const { endpoint } = streaming();
    const { session, peer } = await open(endpoint, 'client', '', BEFORE_RESUMABLE);
    const first = testSink();
    const second = testSink();
    streamed(endpoint.openStream(session, true)).start(first);
    streamed(endpoint.openStream(session, true)).start(second);
    expect(first.ended).toBe(true);
    endpoint.notifyPeer(peer, 'notifications/message', { n: 1 });
    expect(first.messages()).toEqual([]);
    expect(second.messages()).toHaveLength(1);
    second.leave();
    expect(endpoint.notifyPeer(peer, 'notifications/message', { n: 2 })).toBe(false);
    expect((await endpoint.post(ping(3), session)).status).toBe(200); // the session itself goes on
  });
});

describe('McpEndpoint resumable streams (2025-11-25)', () => {
  function streaming(options: Partial<McpEndpointOptions> = {}) {
    const { backend, follows } = followBackend();
    const endpoint = new McpEndpoint({ backend, idleMs: 60_000, maxSessions: 64, acceptsSessions: () => true, ...options });
    return { endpoint, follows };
  }
  const started = async (follows: Follow[], count: number): Promise<Follow[]> => {
    await waitFor(() => follows.length >= count, { timeoutMs: 2_000, what: `${count} call(s) to start` });
    return follows;
  };
  const ids = (sink: TestSink): string[] => [...sink.text.matchAll(/^id: (.*)$/gm)].map((m) => m[1] as string);

  it('answers a tool call and a ping as primed streams whose events carry ids, and a call without the Accept as JSON', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint);
    const sink = testSink();
    streamed(await endpoint.post(follow(5), session, '', true)).start(sink);
    expect(sink.text).toBe('id: 1-0\nretry: 1000\ndata: \n\n');
    const [call] = await started(follows, 1);
    call?.finish({ done: true });
    await waitFor(() => sink.ended, { timeoutMs: 2_000, what: 'the stream to end' });
    expect(ids(sink)).toEqual(['1-0', '1-1']);
    expect(sink.messages()).toEqual([{ jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: '{"done":true}' }], structuredContent: { done: true } } }]);
    const pinged = testSink();
    streamed(await endpoint.post(ping(6), session, '', true)).start(pinged);
    await waitFor(() => pinged.ended, { timeoutMs: 2_000, what: 'the ping stream to end' });
    expect(ids(pinged)).toEqual(['2-0', '2-1']);
    expect(pinged.messages()).toEqual([{ jsonrpc: '2.0', id: 6, result: {} }]);
    const plain = endpoint.post(follow(7), session, '', false);
    (await started(follows, 2))[1]?.finish({ n: 7 });
    expect(json(await plain)).toMatchObject({ id: 7, result: { structuredContent: { n: 7 } } });
  });

  it('goes on with a call whose connection broke, and resumes it on GET with Last-Event-ID: the rest, the response, the end', async () => {
    const { endpoint, follows } = streaming();
    const { session } = await open(endpoint);
    const first = testSink();
    streamed(await endpoint.post(follow(8, 'tok'), session, '', true)).start(first);
    const [call] = await started(follows, 1);
    call?.call?.onProgress?.('one');
    first.leave();
    call?.call?.onProgress?.('two');
    expect(call?.call?.signal?.aborted).toBe(false);
    expect(ids(first)).toEqual(['1-0', '1-1']);

    const resumed = testSink();
    streamed(endpoint.openStream(session, true, '1-1')).start(resumed);
    expect(ids(resumed)).toEqual(['1-2']);
    call?.finish({ lines: 2 });
    await waitFor(() => resumed.ended, { timeoutMs: 2_000, what: 'the resumed stream to end' });
    expect(ids(resumed)).toEqual(['1-2', '1-3']);
    expect(resumed.messages()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, message: 'two' } },
      expect.objectContaining({ id: 8, result: expect.objectContaining({ structuredContent: { lines: 2 } }) }),
    ]);
    // Ended, the stream stays replayable for the window: the response once more.
    const again = testSink();
    streamed(endpoint.openStream(session, true, '1-2')).start(again);
    expect(ids(again)).toEqual(['1-3']);
    expect(again.ended).toBe(true);
  });

  it("primes the session's GET stream and replays what came after a Last-Event-ID of it, as the session's stream", async () => {
    const { endpoint } = streaming();
    const { session, peer } = await open(endpoint);
    const first = testSink();
    streamed(endpoint.openStream(session, true)).start(first);
    expect(ids(first)).toEqual(['0-0']);
    endpoint.notifyPeer(peer, 'notifications/resources/list_changed');
    endpoint.notifyPeer(peer, 'notifications/message', { level: 'warning', data: 'x' });
    expect(ids(first)).toEqual(['0-0', '0-1', '0-2']);
    first.leave();

    const resumed = testSink();
    streamed(endpoint.openStream(session, true, '0-1')).start(resumed);
    expect(ids(resumed)).toEqual(['0-2']);
    expect(endpoint.notifyPeer(peer, 'notifications/message', { n: 3 })).toBe(true);
    expect(ids(resumed)).toEqual(['0-2', '0-3']);
    expect(resumed.ended).toBe(false);
    expect(endpoint.delete(session).status).toBe(204);
    expect(resumed.ended).toBe(true);
  });

  it('refuses a Last-Event-ID the session keeps no stream for with 404 stream_not_found; a client before 2025-11-25 just opens its stream', async () => {
    const { endpoint } = streaming();
    const { session } = await open(endpoint);
    for (const id of ['7-1', '0-99', 'junk', '1-0']) {
      const reply = endpoint.openStream(session, true, id);
      expect([reply.status, (json(reply) as { error: { code: string } }).error.code]).toEqual([404, 'stream_not_found']);
    }
    const older = await open(endpoint, 'older', '', BEFORE_RESUMABLE);
    const sink = testSink();
    streamed(endpoint.openStream(older.session, true, '0-0')).start(sink);
    expect(sink.comments()).toEqual(['the session stream is open']);
    expect(ids(sink)).toEqual([]);
  });
});
