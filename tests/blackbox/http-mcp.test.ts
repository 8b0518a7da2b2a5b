/**
 * MCP over HTTP (`POST /mcp`, the request half of Streamable HTTP) on `majordomus serve`,
 * black-box on port 0 in a temporary git repository. Covers, over raw requests:
 * - initialize answers 200 with an Mcp-Session-Id header, echoes a supported protocol version
 *   (the latest for an unsupported one), names majordomus and tells the caller its peer id; a
 *   failing initialize (no protocolVersion) opens no session;
 * - requests carrying the session id are answered (ping, tools/list); a notification alone → 202
 *   with an empty body; every answer carries Content-Length and Cache-Control: no-store;
 * - no session header on a non-initialize → 400 session_required; an unknown session → 404
 *   session_not_found; DELETE → 204, then the same id → 404 on POST and DELETE; DELETE with no
 *   header → 400 session_required;
 * - malformed JSON → JSON-RPC -32700, and the server and the session serve on; an unknown method →
 *   -32601 with the request's id;
 * - GET / counts open sessions as peers; a REST call carrying a live Mcp-Session-Id announces as
 *   that peer and GET /api/v1/peers then shows the announcement; one carrying an unknown session id
 *   → 404 session_not_found; a blank intent → 400 invalid_input;
 * - a session left idle past MAJORDOMUS_IDLE_SESSION_MS expires: its peer leaves the board and its
 *   id answers 404 session_not_found;
 * And with the SDK's own Client over StreamableHTTPClientTransport:
 * - connect, list tools, call every tool (structured output checked by the SDK against each
 *   tool's output schema), list and read resources, terminate the session, close;
 * - two clients at once are distinct peers p1 and p2 named from their clientInfo, and an
 *   announcement on `src/a` by one reports the overlap with the other's `src`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rawRequest, type RawResponse } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { OBJECT_URIS, RULE_URI, serveFixture, type Served } from './http-fixture.js';
import { BUILTIN_TOOLS } from '../helpers/builtins.js';


/** A protocol version the SDK supports that is not its latest, to see it echoed. */
const OLDER_VERSION = SUPPORTED_PROTOCOL_VERSIONS.find((v) => v !== LATEST_PROTOCOL_VERSION) as string;

function expectFramed(res: RawResponse): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-length']).toBe(String(res.body.length));
}

function expectRefusal(res: RawResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  expect(res.json()).toEqual({ error: { code, message: expect.stringMatching(/\S/) } });
  expectFramed(res);
}

/**
 * Raw `/mcp` against one server, carrying its lease's bearer token. It accepts JSON only: what it
 * checks is the JSON path (a session of 2025-11-25 streams every request to a client that also
 * accepts `text/event-stream`: http-mcp-resume.test.ts).
 */
function mcpClient(port: () => number, token: () => string) {
  let nextId = 1;
  const post = (body: unknown, sessionId?: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    rawRequest({
      port: port(),
      method: 'POST',
      path: '/mcp',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        Authorization: `Bearer ${token()}`,
        ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
        ...headers,
      },
    });
  const rpc = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<RawResponse> =>
    post({ jsonrpc: '2.0', id: nextId++, method, params }, sessionId);
  const initialize = async (name = 'raw-client', protocolVersion: string = LATEST_PROTOCOL_VERSION): Promise<{ sessionId: string; res: RawResponse }> => {
    const res = await rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name, version: '0.0.1' } });
    expect({ status: res.status, body: res.status === 200 ? '' : res.text }).toEqual({ status: 200, body: '' });
    const sessionId = res.headers['mcp-session-id'];
    expect(typeof sessionId).toBe('string');
    const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId as string);
    expect(initialized.status).toBe(202);
    return { sessionId: sessionId as string, res };
  };
  const del = (sessionId?: string): Promise<RawResponse> =>
    rawRequest({
      port: port(),
      method: 'DELETE',
      path: '/mcp',
      headers: { Authorization: `Bearer ${token()}`, ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}) },
    });
  return { post, rpc, initialize, del };
}

describe('/mcp over raw HTTP', () => {
  let served: Served;
  const port = (): number => served.server.port;
  const mcp = mcpClient(port, () => served.server.token);
  const opened: string[] = [];
  const open = async (name?: string, version?: string): Promise<{ sessionId: string; res: RawResponse }> => {
    const session = await mcp.initialize(name, version);
    opened.push(session.sessionId);
    return session;
  };
  const getJson = async (path: string, headers?: Record<string, string>): Promise<any> => {
    const res = await rawRequest({ port: port(), path, headers: { ...served.server.auth, ...(headers ?? {}) } });
    expect({ path, status: res.status, body: res.status === 200 ? '' : res.text }).toEqual({ path, status: 200, body: '' });
    return res.json();
  };

  beforeAll(async () => {
    served = await serveFixture();
  });

  afterEach(async () => {
    // End what a test opened so the next one starts with an empty board. The HTTP thread hands a
    // leave to the board after answering the DELETE, and learns the new count after that: wait
    // until both GET / and the board say empty.
    while (opened.length > 0) await mcp.del(opened.pop());
    await waitFor(async () => (await getJson('/')).peers === 0 && (await getJson('/api/v1/peers')).peers.length === 0, {
      what: 'the board to empty after the DELETEs',
      intervalMs: 100,
    });
  });

  afterAll(async () => {
    await served?.close();
  });

  it('initialize answers 200 with an Mcp-Session-Id header, names majordomus and tells the caller its peer id', async () => {
    const { sessionId, res } = await open('raw-client', OLDER_VERSION);
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    expectFramed(res);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: expect.any(Number), result: { protocolVersion: OLDER_VERSION, serverInfo: { name: 'majordomus' } } });
    const peers = await getJson('/api/v1/peers');
    expect(peers.peers).toHaveLength(1);
    const me = peers.peers[0];
    expect(me).toMatchObject({ client: { name: 'raw-client', version: '0.0.1' }, transport: 'http' });
    expect(body.result.instructions).toContain(`You are peer ${me.id}.`);
    expect(body.result.instructions).toContain(`http://127.0.0.1:${port()}/mcp`);
  });

  it('initialize with an unsupported protocol version is answered with the latest supported one', async () => {
    const { res } = await open('raw-client', '1999-01-01');
    expect(res.json().result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('an initialize that fails (no protocolVersion) answers the JSON-RPC error and opens no session', async () => {
    const res = await mcp.rpc('initialize', { capabilities: {}, clientInfo: { name: 'careless', version: '1' } });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32602 } });
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect((await getJson('/')).peers).toBe(0);
  });

  it('answers requests that carry the session id, and a notification alone with 202 and no body', async () => {
    const { sessionId } = await open();
    const ping = await mcp.rpc('ping', {}, sessionId);
    expect(ping.status).toBe(200);
    expectFramed(ping);
    expect(ping.json()).toMatchObject({ jsonrpc: '2.0', result: {} });
    const tools = await mcp.rpc('tools/list', {}, sessionId);
    expect(tools.status).toBe(200);
    expect(tools.json().result.tools.map((t: { name: string }) => t.name).sort()).toEqual(BUILTIN_TOOLS);
    const notification = await mcp.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, sessionId);
    expect(notification.status).toBe(202);
    expect(notification.body.length).toBe(0);
    expect(notification.headers['cache-control']).toBe('no-store');
    expect(notification.headers['content-length']).toBe('0');
  });

  it('refuses a non-initialize request without Mcp-Session-Id with 400 session_required', async () => {
    expectRefusal(await mcp.rpc('tools/list'), 400, 'session_required');
    expectRefusal(await mcp.post({ jsonrpc: '2.0', method: 'notifications/initialized' }), 400, 'session_required');
  });

  it('answers an unknown Mcp-Session-Id with 404 session_not_found', async () => {
    expectRefusal(await mcp.rpc('tools/list', {}, 'no-such-session'), 404, 'session_not_found');
    expectRefusal(await mcp.del('no-such-session'), 404, 'session_not_found');
  });

  it('DELETE ends the session with 204, after which the same id answers 404 and the peer is gone', async () => {
    const { sessionId } = await mcp.initialize('short-lived');
    expect((await getJson('/')).peers).toBe(1);
    const ended = await mcp.del(sessionId);
    expect(ended.status).toBe(204);
    expect(ended.body.length).toBe(0);
    expect(ended.headers['cache-control']).toBe('no-store');
    expectRefusal(await mcp.rpc('ping', {}, sessionId), 404, 'session_not_found');
    expectRefusal(await mcp.del(sessionId), 404, 'session_not_found');
    await waitFor(async () => (await getJson('/')).peers === 0, { what: 'the peer to leave the board' });
    expect(await getJson('/api/v1/peers')).toEqual({ you: null, peers: [] });
  });

  it('refuses DELETE /mcp without a session header with 400 session_required', async () => {
    expectRefusal(await mcp.del(), 400, 'session_required');
  });

  it('answers malformed JSON with JSON-RPC -32700, and the server and the session serve on', async () => {
    const { sessionId } = await open();
    for (const session of [sessionId, undefined]) {
      const res = await mcp.post('{"jsonrpc": "2.0", "id": 1, "method": ', session);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectFramed(res);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
    expect((await mcp.rpc('ping', {}, sessionId)).status).toBe(200);
    expect((await rawRequest({ port: port(), path: '/' })).status).toBe(200);
  });

  it('answers an unknown method with JSON-RPC -32601 naming the request id', async () => {
    const { sessionId } = await open();
    const res = await mcp.post({ jsonrpc: '2.0', id: 'abc', method: 'no/such/method', params: {} }, sessionId);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: 'abc', error: { code: -32601 } });
    expect((await mcp.rpc('ping', {}, sessionId)).status).toBe(200);
  });

  it('counts open sessions as peers in GET /', async () => {
    expect((await getJson('/')).peers).toBe(0);
    await open('first');
    await open('second');
    expect((await getJson('/')).peers).toBe(2);
  });

  it('a REST call carrying a live Mcp-Session-Id announces as that peer, and GET /api/v1/peers shows the announcement', async () => {
    const { sessionId } = await open('rest-announcer');
    const res = await rawRequest({
      port: port(),
      method: 'POST',
      path: '/api/v1/peers/announce',
      body: JSON.stringify({ intent: 'refactor the router', paths: ['src/http'] }),
      headers: { 'Content-Type': 'application/json', 'Mcp-Session-Id': sessionId, ...served.server.auth },
    });
    expect({ status: res.status, body: res.status === 200 ? '' : res.text }).toEqual({ status: 200, body: '' });
    expectFramed(res);
    const answer = res.json();
    expect(answer).toMatchObject({
      peer: { client: { name: 'rest-announcer' }, announcement: { intent: 'refactor the router', paths: ['src/http'] } },
      overlaps: [],
    });
    const mine = await getJson('/api/v1/peers', { 'Mcp-Session-Id': sessionId });
    expect(mine.you).toBe(answer.peer.id);
    const anyone = await getJson('/api/v1/peers');
    expect(anyone.you).toBeNull();
    expect(anyone.peers).toEqual([
      expect.objectContaining({ id: answer.peer.id, announcement: expect.objectContaining({ intent: 'refactor the router', paths: ['src/http'] }) }),
    ]);
  });

  it('refuses a REST call carrying an unknown Mcp-Session-Id with 404 session_not_found', async () => {
    const res = await rawRequest({
      port: port(),
      method: 'POST',
      path: '/api/v1/peers/announce',
      body: JSON.stringify({ intent: 'x' }),
      headers: { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'no-such-session', ...served.server.auth },
    });
    expectRefusal(res, 404, 'session_not_found');
  });

  it('refuses a blank intent from a live session with 400 invalid_input', async () => {
    const { sessionId } = await open();
    const res = await rawRequest({
      port: port(),
      method: 'POST',
      path: '/api/v1/peers/announce',
      body: JSON.stringify({ intent: '   ', paths: ['src'] }),
      headers: { 'Content-Type': 'application/json', 'Mcp-Session-Id': sessionId, ...served.server.auth },
    });
    expectRefusal(res, 400, 'invalid_input');
  });
});

describe('idle /mcp sessions', () => {
  let served: Served | undefined;

  afterEach(async () => {
    await served?.close();
    served = undefined;
  });

  it('expire after MAJORDOMUS_IDLE_SESSION_MS: the peer leaves the board and the id answers 404 session_not_found', async () => {
    served = await serveFixture({ env: { MAJORDOMUS_IDLE_SESSION_MS: '1500' } });
    const server = served.server;
    const mcp = mcpClient(() => server.port, () => server.token);
    const { sessionId } = await mcp.initialize('dozing');
    const peers = async (): Promise<Array<{ id: string }>> =>
      (await rawRequest({ port: server.port, path: '/api/v1/peers', headers: server.auth })).json().peers;
    expect(await peers()).toHaveLength(1);
    // Poll without the session id: a request carrying it would keep the session alive.
    await waitFor(async () => (await peers()).length === 0, { timeoutMs: 30_000, intervalMs: 200, what: 'the idle session to expire' });
    const res = await mcp.rpc('ping', {}, sessionId);
    expectRefusal(res, 404, 'session_not_found');
    // GET / counts what the HTTP thread last heard from the board, just after the board itself.
    await waitFor(async () => (await rawRequest({ port: server.port, path: '/' })).json().peers === 0, { what: 'GET / to count no peer', intervalMs: 100 });
  });
});

interface SdkConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

async function connectSdk(url: string, name: string, token: string): Promise<SdkConnection> {
  const client = new Client({ name, version: '1.2.3' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return { client, transport };
}

async function closeSdk({ client, transport }: SdkConnection): Promise<void> {
  await transport.terminateSession().catch(() => undefined);
  await client.close().catch(() => undefined);
}

function structured(result: Awaited<ReturnType<Client['callTool']>>): any {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent;
}

describe('the SDK client over Streamable HTTP', () => {
  let served: Served | undefined;
  const connections: SdkConnection[] = [];
  const connect = async (name: string): Promise<SdkConnection> => {
    const connection = await connectSdk((served as Served).server.url, name, (served as Served).server.token);
    connections.push(connection);
    return connection;
  };

  beforeEach(async () => {
    served = await serveFixture();
  });

  afterEach(async () => {
    while (connections.length > 0) await closeSdk(connections.pop() as SdkConnection);
    await served?.close();
    served = undefined;
  });

  it('connects, lists tools, calls every tool, lists and reads resources, then terminates its session', async () => {
    const { client, transport } = await connect('sdk-client');
    expect(transport.sessionId).toEqual(expect.any(String));
    expect(client.getServerVersion()?.name).toBe('majordomus');
    expect(client.getInstructions()).toContain('You are peer p1.');

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(BUILTIN_TOOLS);

    // The SDK checks each structuredContent against the tool's outputSchema.
    const info = structured(await client.callTool({ name: 'majordomus_info', arguments: {} }));
    expect(info).toMatchObject({ name: 'majordomus', state: 'ok' });
    const list = structured(await client.callTool({ name: 'majordomus_list', arguments: { kind: 'rule' } }));
    expect(list.objects.map((o: { uri: string }) => o.uri).sort()).toEqual([RULE_URI, 'majordomus://rule/testing']);
    const object = structured(await client.callTool({ name: 'majordomus_get', arguments: { uri: RULE_URI } }));
    expect(object).toMatchObject({ uri: RULE_URI, title: 'Prefer small modules' });
    expect(object.content).toContain('One concept per file');
    const search = structured(await client.callTool({ name: 'majordomus_search', arguments: { query: 'modules', limit: 5 } }));
    expect(search.hits[0]).toMatchObject({ uri: RULE_URI });
    const capabilities = structured(await client.callTool({ name: 'majordomus_capabilities', arguments: {} }));
    expect(capabilities.capabilities.length).toBeGreaterThanOrEqual(BUILTIN_TOOLS.length);
    const capability = structured(await client.callTool({ name: 'majordomus_capability', arguments: { id: 'peers.announce' } }));
    expect(capability).toMatchObject({ id: 'peers.announce', kind: 'command' });
    const peers = structured(await client.callTool({ name: 'majordomus_peers', arguments: {} }));
    expect(peers.you).toBe('p1');
    expect(peers.peers).toEqual([expect.objectContaining({ id: 'p1', client: { name: 'sdk-client', version: '1.2.3' }, transport: 'http' })]);
    const announced = structured(await client.callTool({ name: 'majordomus_announce', arguments: { intent: 'write tests', paths: ['tests'] } }));
    expect(announced).toMatchObject({ peer: { id: 'p1', announcement: { intent: 'write tests', paths: ['tests'] } }, overlaps: [] });

    const missing = await client.callTool({ name: 'majordomus_get', arguments: { uri: 'majordomus://rule/nope' } });
    expect(missing.isError).toBe(true);
    // The harness: no profile is nominated here, no session runs; each refusal names the fix.
    expect(structured(await client.callTool({ name: 'majordomus_list_profiles', arguments: {} }))).toEqual({ profiles: [] });
    expect(structured(await client.callTool({ name: 'majordomus_session_list', arguments: {} }))).toEqual({ sessions: [] });
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [name, args] of [
      ['majordomus_spawn', { profile: 'none', prompt: 'hello' }],
      ['majordomus_session_send', { session: unknown, prompt: 'go on' }],
      ['majordomus_session_status', { session: unknown }],
      ['majordomus_session_read', { session: unknown }],
      ['majordomus_session_kill', { session: unknown }],
    ] as const) {
      const refused = await client.callTool({ name, arguments: args });
      expect(refused.isError, name).toBe(true);
      expect(JSON.stringify(refused.content), name).toMatch(/list_profiles|session_list/);
    }

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([...OBJECT_URIS, 'majordomus://inbox', 'majordomus://sessions'].sort());
    const read = await client.readResource({ uri: RULE_URI });
    expect(read.contents).toEqual([expect.objectContaining({ uri: RULE_URI, text: expect.stringContaining('# Prefer small modules') })]);

    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    const after = await rawRequest({
      port: (served as Served).server.port,
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: { 'Content-Type': 'application/json', 'Mcp-Session-Id': sessionId, ...(served as Served).server.auth },
    });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('two clients at once are distinct peers named from clientInfo, and an announcement reports the overlap with the other\'s', async () => {
    const first = await connect('claude-code');
    const second = await connect('codex');
    expect(second.client.getInstructions()).toContain('You are peer p2.');
    expect(second.client.getInstructions()).toContain('- p1 (client "claude-code" "1.2.3", http) has announced nothing');

    const seenByFirst = structured(await first.client.callTool({ name: 'majordomus_peers', arguments: {} }));
    expect(seenByFirst.you).toBe('p1');
    expect(seenByFirst.peers.map((p: { id: string; client: { name: string } }) => [p.id, p.client.name])).toEqual([
      ['p1', 'claude-code'],
      ['p2', 'codex'],
    ]);
    const seenBySecond = structured(await second.client.callTool({ name: 'majordomus_peers', arguments: {} }));
    expect(seenBySecond.you).toBe('p2');

    const broad = structured(await first.client.callTool({ name: 'majordomus_announce', arguments: { intent: 'restructure src', paths: ['src'] } }));
    expect(broad.overlaps).toEqual([]);
    const narrow = structured(await second.client.callTool({ name: 'majordomus_announce', arguments: { intent: 'fix a bug in a', paths: ['src/a'] } }));
    expect(narrow.overlaps).toEqual([{ peer: 'p1', path: 'src/a', their_path: 'src' }]);

    const board = structured(await first.client.callTool({ name: 'majordomus_peers', arguments: {} }));
    expect(board.peers.find((p: { id: string }) => p.id === 'p2').announcement).toMatchObject({ intent: 'fix a bug in a', paths: ['src/a'] });
  });
});
