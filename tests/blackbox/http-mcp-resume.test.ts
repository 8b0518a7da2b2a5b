/**
 * Resumable streams on `/mcp` (MCP 2025-11-25, Streamable HTTP: "Resumability and Redelivery",
 * SEP-1699), black-box on `majordomus serve` on port 0: what the conformance scenarios
 * `server-sse-polling` and `server-sse-multiple-streams` check, and the resumption they cannot.
 * Covers:
 * - a request (a tool call here) of a 2025-11-25 session, from a client that accepts
 *   text/event-stream, is an event stream that opens with a priming event (an id, `retry: 1000`, empty data) and whose response
 *   event carries an id; the response's bytes are those of the JSON answer;
 * - a client that left that stream right after the priming event gets the response on `GET /mcp`
 *   with `Last-Event-ID`, and the stream then ends;
 * - the session's own GET stream is primed; its events carry ids (a lease warning, here); a client
 *   that lost it gets what came after its last event on a GET with that `Last-Event-ID`;
 * - a `Last-Event-ID` the session keeps no stream for → 404 stream_not_found;
 * - several requests of one session at once are each answered on a primed stream of its own;
 * - a 2025-06-18 session gets the same tool call as JSON, and no priming on its GET stream.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream, sseIds, sseMessages, type EventStream } from '../helpers/event-stream.js';
import { rawRequest, type RawResponse } from '../helpers/serve.js';
import { waitFor, withTimeout } from '../helpers/wait.js';
import { serveFixture, type Served } from './http-fixture.js';

const SSE = 'text/event-stream';
const BOTH = 'application/json, text/event-stream';
const PRIMING = /^id: (\d+-\d+)\nretry: 1000\ndata: \n\n/;

describe('/mcp resumable streams', () => {
  let served: Served;
  const opened: string[] = [];
  const streams: EventStream[] = [];
  const port = (): number => served.server.port;
  const auth = (): Record<string, string> => served.server.auth;

  const post = (body: unknown, sessionId?: string, accept = BOTH): Promise<RawResponse> =>
    rawRequest({
      port: port(),
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: accept, ...auth(), ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}) },
    });
  const open = async (protocolVersion = LATEST_PROTOCOL_VERSION): Promise<string> => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'resumer', version: '1' } } });
    expect(res.status, res.text).toBe(200);
    const sessionId = res.headers['mcp-session-id'] as string;
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status).toBe(202);
    opened.push(sessionId);
    return sessionId;
  };
  const get = async (sessionId: string, lastEventId?: string): Promise<EventStream> => {
    const stream = await openEventStream({ port: port(), headers: { Accept: SSE, ...auth(), 'Mcp-Session-Id': sessionId, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } });
    streams.push(stream);
    return stream;
  };
  const info = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'majordomus_info', arguments: {} } });

  beforeAll(async () => {
    served = await serveFixture();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    while (opened.length > 0) await rawRequest({ port: port(), method: 'DELETE', path: '/mcp', headers: { ...auth(), 'Mcp-Session-Id': opened.pop() as string } });
  });
  afterAll(async () => {
    await served?.close();
  });

  it('streams a tool call with a priming event first and an id on its response, the bytes of its JSON answer', async () => {
    const sessionId = await open();
    const streamed = await post(info(4), sessionId);
    expect(streamed.status, streamed.text).toBe(200);
    expect(streamed.headers['content-type']).toBe(SSE);
    expect(streamed.text).toMatch(PRIMING);
    const [priming, response] = sseIds(streamed.text);
    expect(response).toMatch(/^\d+-\d+$/);
    expect(response).not.toBe(priming);
    const plain = await post(info(4), sessionId, 'application/json');
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(streamed.text.endsWith(`id: ${response}\nevent: message\ndata: ${plain.text}\n\n`)).toBe(true);
  });

  it('gives the response of a stream its client left after the priming event on GET with Last-Event-ID, then ends', async () => {
    const sessionId = await open();
    const left = await openEventStream({ port: port(), method: 'POST', body: JSON.stringify(info(5)), headers: { 'Content-Type': 'application/json', Accept: BOTH, ...auth(), 'Mcp-Session-Id': sessionId } });
    const priming = PRIMING.exec(await waitFor(() => (PRIMING.test(left.text()) ? left.text() : null), { what: 'the priming event' }))?.[1] as string;
    left.close();

    const resumed = await get(sessionId, priming);
    expect(resumed.status).toBe(200);
    expect(await withTimeout(resumed.ended, 10_000, 'the resumed stream to end')).toEqual({ complete: true });
    expect(sseMessages(resumed.text())).toEqual([expect.objectContaining({ id: 5, result: expect.objectContaining({ structuredContent: expect.objectContaining({ name: 'majordomus' }) }) })]);
  });

  it("primes the session's stream and replays what came after a Last-Event-ID of it", async () => {
    const sessionId = await open();
    const first = await get(sessionId);
    await waitFor(() => PRIMING.test(first.text().replace(/^: [^\n]*\n\n/, '')), { what: 'the session stream to be primed' });
    // A lease problem: the owner republishes the lease and says so, a warning on the session's stream.
    await rm(join(served.repo.root, '.ai/local/state/mcp/server.json'));
    const gone = (m: { method?: string; params?: { data?: unknown } }): boolean => m.method === 'notifications/message' && /is gone; publishing it again/.test(String(m.params?.data));
    await waitFor(() => sseMessages(first.text()).some(gone), { what: 'the lease warning on the first stream' });
    const ids = sseIds(first.text());
    expect(ids).toHaveLength(2);
    first.close();

    const resumed = await get(sessionId, ids[0]);
    await waitFor(() => sseIds(resumed.text()).length >= 1, { what: 'the replay' });
    expect(sseIds(resumed.text())).toEqual([ids[1]]);
    expect(sseMessages(resumed.text()).filter(gone)).toHaveLength(1);
    expect((await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, sessionId)).status).toBe(200); // the resumed stream is the session's
  });

  it('refuses a Last-Event-ID the session keeps no stream for with 404 stream_not_found', async () => {
    const sessionId = await open();
    for (const id of ['99-1', 'not-an-id']) {
      const res = await rawRequest({ port: port(), path: '/mcp', headers: { Accept: SSE, ...auth(), 'Mcp-Session-Id': sessionId, 'Last-Event-ID': id } });
      expect(res.status, res.text).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'stream_not_found', message: expect.stringMatching(/\S/) } });
    }
  });

  it('answers several requests of one session at once, each on a primed stream of its own', async () => {
    const sessionId = await open();
    const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    const answers = await Promise.all([post(info(11), sessionId), post(list(12), sessionId), post(list(13), sessionId)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.headers['content-type'])).toEqual([SSE, SSE, SSE]);
    for (const answer of answers) expect(answer.text).toMatch(PRIMING);
    const streamsOf = answers.map((a) => (sseIds(a.text)[0] as string).split('-')[0]);
    expect(new Set(streamsOf).size).toBe(3);
    expect(answers.map((a) => sseMessages(a.text).at(-1)?.id)).toEqual([11, 12, 13]);
  });

  it('answers a 2025-06-18 session as before: the tool call as JSON, its GET stream unprimed', async () => {
    const sessionId = await open('2025-06-18');
    const plain = await post(info(6), sessionId);
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    const stream = await get(sessionId);
    await waitFor(() => stream.text().includes(': the session stream is open'), { what: 'the stream to open' });
    expect(sseIds(stream.text())).toEqual([]);
  });
});
