/**
 * The streaming half of MCP's Streamable HTTP on `majordomus serve`, black-box on port 0 in a
 * temporary git repository. Covers:
 * - GET /mcp with a live session, the token and Accept: text/event-stream opens the session's
 *   stream (200, text/event-stream, Cache-Control: no-store, no Content-Length) that stays open
 *   until DELETE of the session ends it; a second GET replaces the first (which ends);
 * - GET /mcp without the Accept → 406 not_acceptable; without the token → 401 unauthorized; for an
 *   unknown session → 404 session_not_found; without a session → 400 session_required;
 * - a POST of a tool call carrying _meta.progressToken from a client that accepts
 *   text/event-stream is answered as an event stream whose last event is the response — the same
 *   bytes the JSON answer of that call carries; without the Accept the same call is plain JSON;
 * - the SDK's client (which opens the session stream itself) calls a tool with a progress
 *   handler and gets its answer over the stream;
 * - a server stopped while a session stream is open ends the stream and exits 0, logging no error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream, sseMessages, type EventStream } from '../helpers/event-stream.js';
import { rawRequest, type RawResponse } from '../helpers/serve.js';
import { waitFor, withTimeout } from '../helpers/wait.js';
import { serveFixture, type Served } from './http-fixture.js';

const SSE = 'text/event-stream';

function expectRefusal(res: RawResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  expect(res.json()).toEqual({ error: { code, message: expect.stringMatching(/\S/) } });
}

describe('/mcp streams', () => {
  let served: Served;
  const opened: string[] = [];
  const streams: EventStream[] = [];
  const port = (): number => served.server.port;
  const auth = (): Record<string, string> => served.server.auth;

  const post = (body: unknown, sessionId?: string, accept = 'application/json, text/event-stream'): Promise<RawResponse> =>
    rawRequest({
      port: port(),
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: accept, ...auth(), ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}) },
    });
  const del = (sessionId: string): Promise<RawResponse> =>
    rawRequest({ port: port(), method: 'DELETE', path: '/mcp', headers: { ...auth(), 'Mcp-Session-Id': sessionId } });
  const open = async (name = 'stream-client'): Promise<string> => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1' } } });
    expect(res.status, res.text).toBe(200);
    const sessionId = res.headers['mcp-session-id'] as string;
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status).toBe(202);
    opened.push(sessionId);
    return sessionId;
  };
  const stream = async (sessionId: string): Promise<EventStream> => {
    const opening = await openEventStream({ port: port(), headers: { Accept: SSE, ...auth(), 'Mcp-Session-Id': sessionId } });
    streams.push(opening);
    return opening;
  };

  beforeAll(async () => {
    served = await serveFixture();
  });

  afterEach(async () => {
    for (const opening of streams.splice(0)) opening.close();
    while (opened.length > 0) await del(opened.pop() as string);
  });

  afterAll(async () => {
    await served?.close();
  });

  it("GET /mcp opens the session's event stream, which stays open until DELETE ends the session", async () => {
    const sessionId = await open();
    const events = await stream(sessionId);
    expect(events.status).toBe(200);
    expect(events.headers['content-type']).toBe(SSE);
    expect(events.headers['cache-control']).toBe('no-store');
    expect(events.headers['content-length']).toBeUndefined();
    await waitFor(() => events.text().includes(': the session stream is open\n\n'), { what: 'the opening comment of the stream' });
    // Still open while the session lives: a request of the session is answered beside it.
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, sessionId)).status).toBe(200);
    let over = false;
    void events.ended.then(() => (over = true));
    expect(over).toBe(false);
    expect((await del(sessionId)).status).toBe(204);
    opened.pop();
    expect(await withTimeout(events.ended, 10_000, 'the stream to end with its session')).toEqual({ complete: true });
  });

  it('a second GET /mcp replaces the first, which ends', async () => {
    const sessionId = await open();
    const first = await stream(sessionId);
    const second = await stream(sessionId);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await withTimeout(first.ended, 10_000, 'the replaced stream to end')).toEqual({ complete: true });
    await waitFor(() => second.text().includes(': the session stream is open'), { what: 'the second stream to open' });
  });

  it('GET /mcp refuses: 406 not_acceptable without the Accept, 401 unauthorized without the token, 404 for an unknown session, 400 without one', async () => {
    const sessionId = await open();
    const get = (headers: Record<string, string>): Promise<RawResponse> => rawRequest({ port: port(), path: '/mcp', headers });
    expectRefusal(await get({ ...auth(), 'Mcp-Session-Id': sessionId }), 406, 'not_acceptable');
    expectRefusal(await get({ Accept: 'application/json', ...auth(), 'Mcp-Session-Id': sessionId }), 406, 'not_acceptable');
    expectRefusal(await get({ Accept: SSE, 'Mcp-Session-Id': sessionId }), 401, 'unauthorized');
    expectRefusal(await get({ Accept: SSE, ...auth(), 'Mcp-Session-Id': 'no-such-session' }), 404, 'session_not_found');
    expectRefusal(await get({ Accept: SSE, ...auth() }), 400, 'session_required');
    // None of these disturbed the session.
    expect((await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, sessionId)).status).toBe(200);
  });

  it('answers a tool call that asked for progress as an event stream whose last event is the response, the bytes of its JSON answer', async () => {
    const sessionId = await open();
    const call = (id: number, progressToken?: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'majordomus_info', arguments: {}, ...(progressToken ? { _meta: { progressToken } } : {}) },
    });
    const streamed = await post(call(7, 'info-7'), sessionId);
    expect(streamed.status, streamed.text).toBe(200);
    expect(streamed.headers['content-type']).toBe(SSE);
    expect(streamed.headers['cache-control']).toBe('no-store');
    expect(streamed.headers['content-length']).toBeUndefined();
    const messages = sseMessages(streamed.text);
    expect(messages.at(-1)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { name: 'majordomus' } } });
    expect(messages.slice(0, -1).every((m) => m.method === 'notifications/progress' && m.params.progressToken === 'info-7')).toBe(true);

    // Without the Accept, the same call is plain JSON; the streamed response carries its bytes.
    const plain = await post(call(7, 'info-7'), sessionId, 'application/json');
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(streamed.text.endsWith(`event: message\ndata: ${plain.text}\n\n`)).toBe(true);
    // A session of 2025-11-25 streams every tool call to a client that accepts it (resumable:
    // http-mcp-resume.test.ts); one that asked for no progress gets only its response on it.
    const noToken = await post(call(8), sessionId);
    expect(noToken.headers['content-type']).toBe(SSE);
    expect(sseMessages(noToken.text)).toEqual([expect.objectContaining({ id: 8, result: expect.objectContaining({ structuredContent: expect.objectContaining({ name: 'majordomus' }) }) })]);
  });

  it("lets the SDK's client call a tool with a progress handler and get the answer over the stream", async () => {
    const client = new Client({ name: 'sdk-streams', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), { requestInit: { headers: auth() } });
    await client.connect(transport);
    try {
      const progress: unknown[] = [];
      const result = await client.callTool({ name: 'majordomus_info', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ name: 'majordomus' });
      expect(progress).toEqual([]); // an ordinary tool reports none
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });
});

describe('a server stopped with a session stream open', () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.close();
    served = undefined;
  });

  it('ends the stream and exits 0, logging no error', async () => {
    served = await serveFixture();
    const { port, auth } = served.server;
    const init = await rawRequest({
      port,
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      headers: { 'Content-Type': 'application/json', ...auth },
    });
    const events = await openEventStream({ port, headers: { Accept: SSE, ...auth, 'Mcp-Session-Id': init.headers['mcp-session-id'] as string } });
    expect(events.status).toBe(200);
    expect(await served.server.stop()).toEqual({ code: 0, signal: null });
    await withTimeout(events.ended, 10_000, 'the stream to end with the server');
    expect(served.server.stderr()).not.toMatch(/error|failed/i);
  });
});

