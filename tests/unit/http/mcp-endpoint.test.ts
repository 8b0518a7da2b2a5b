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
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { McpEndpoint, PEER_HEADER, SESSION_HEADER, type McpEndpointOptions } from '../../../src/http/mcp-endpoint.js';
import type { HttpReply } from '../../../src/http/reply.js';
import type { McpBackend } from '../../../src/mcp/session.js';

interface FakeBackend extends McpBackend {
  joins: Array<{ name: string; preferred: string | null }>;
  left: string[];
}

function fakeBackend(): FakeBackend {
  let issued = 0;
  const backend: FakeBackend = {
    joins: [],
    left: [],
    tools: { tools: [], capabilityOf: () => undefined },
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

const initialize = (name = 'client', id = 1) =>
  bytes({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, clientInfo: { name, version: '1.0.0' } } });
const ping = (id = 2) => bytes({ jsonrpc: '2.0', id, method: 'ping' });

function header(reply: HttpReply, name: string): string | undefined {
  return reply.headers?.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
}

function json(reply: HttpReply): unknown {
  return JSON.parse(typeof reply.body === 'string' ? reply.body : Buffer.from(reply.body).toString('utf8'));
}

/** Opens a session and answers its id and peer id. */
async function open(endpoint: McpEndpoint, name = 'client', hint = ''): Promise<{ session: string; peer: string }> {
  const reply = await endpoint.post(initialize(name), '', hint);
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
