/**
 * The pool path under concurrency, with the answer cache off so that every call takes the hop:
 * - hundreds of concurrent REST and /mcp calls with distinct inputs are all answered 200, each
 *   with its own answer (no 503 busy below the documented bound, no answer crossed over);
 * - the server keeps serving afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_URIS, serveFixture, type Served } from './http-fixture.js';

describe('the capability pool under concurrent calls', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveFixture({ env: { MAJORDOMUS_ANSWER_CACHE: '0' } });
  });
  afterAll(async () => {
    await served?.close();
  });

  it('answers 300 concurrent REST calls with distinct inputs, each with its own answer', async () => {
    const { url } = served.server;
    const calls = Array.from({ length: 300 }, (_, n) => {
      const uri = OBJECT_URIS[n % OBJECT_URIS.length] as string;
      const query = n % 2 === 0 ? `/api/v1/object?uri=${encodeURIComponent(uri)}` : `/api/v1/search?query=rule&limit=${(n % 20) + 1}`;
      return fetch(`${url}${query}`).then(async (res) => ({ n, uri, status: res.status, body: (await res.json()) as Record<string, unknown> }));
    });
    const answers = await Promise.all(calls);
    expect(answers.filter((a) => a.status !== 200).map((a) => `${a.n}: ${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    for (const a of answers) {
      if (a.n % 2 === 0) expect(a.body.uri).toBe(a.uri);
      else expect((a.body.hits as unknown[]).length).toBeLessThanOrEqual((a.n % 20) + 1);
    }
    expect((await fetch(`${url}/api/v1/health/live`)).status).toBe(200);
  });

  it('answers 200 concurrent /mcp tool calls of one session, each id with its own answer', async () => {
    const { url } = served.server;
    const post = (body: unknown, session?: string): Promise<Response> =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) },
        body: JSON.stringify(body),
      });
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'load', version: '1' } } });
    const session = init.headers.get('mcp-session-id') as string;
    const calls = Array.from({ length: 200 }, (_, n) => {
      const uri = OBJECT_URIS[n % OBJECT_URIS.length] as string;
      return post({ jsonrpc: '2.0', id: n + 1, method: 'tools/call', params: { name: 'majordomus_get', arguments: { uri } } }, session).then(async (res) => ({
        n,
        uri,
        status: res.status,
        body: (await res.json()) as { id: number; result?: { structuredContent?: { uri?: string } } },
      }));
    });
    const answers = await Promise.all(calls);
    expect(answers.filter((a) => a.status !== 200 || a.body.id !== a.n + 1)).toEqual([]);
    for (const a of answers) expect(a.body.result?.structuredContent?.uri).toBe(a.uri);
  });
});
