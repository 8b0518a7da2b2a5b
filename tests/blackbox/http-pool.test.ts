/**
 * The pool path under concurrency, with the answer cache off so that every call takes the hop:
 * - hundreds of concurrent REST and /mcp calls with distinct inputs are all answered 200, each
 *   with its own answer (no 503 busy below the documented bound, no answer crossed over): objects
 *   by uri, and searches whose answers differ (one word per object, and a query of all four words
 *   cut at different limits);
 * - the server keeps serving afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_URI, OBJECT_URIS, RULE_URI, serveFixture, type Served } from './http-fixture.js';

/** One word per fixture object, found in that object only (see LAYER_FILES). */
const ONE_HIT_SEARCHES: ReadonlyArray<{ query: string; uri: string }> = [
  { query: 'modules', uri: RULE_URI },
  { query: 'threads', uri: DOCUMENT_URI },
  { query: 'mcp', uri: 'majordomus://adr/0001-use-mcp' },
  { query: 'behaviour', uri: 'majordomus://rule/testing' },
];
/** Finds all four objects, so each limit from 1 to 4 gives a different answer. */
const ALL_WORDS = ONE_HIT_SEARCHES.map((search) => search.query).join(' ');

interface SearchAnswer {
  hits: Array<{ uri: string }>;
}

const searchPath = (query: string, limit: number): string => `/api/v1/search?query=${encodeURIComponent(query)}&limit=${limit}`;

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
    // The ranking of the four-word query, asked alone before the load: every limit cuts it.
    const reference = (await (await fetch(`${url}${searchPath(ALL_WORDS, 10)}`)).json()) as SearchAnswer;
    const ranked = reference.hits.map((hit) => hit.uri);
    expect([...ranked].sort()).toEqual([...OBJECT_URIS].sort());

    const calls = Array.from({ length: 300 }, (_, n) => {
      const uri = OBJECT_URIS[n % OBJECT_URIS.length] as string;
      // Even calls get an object; odd ones search one word (n % 4 = 1) or all four at limit 1..4.
      const search = ONE_HIT_SEARCHES[(n >> 2) % ONE_HIT_SEARCHES.length] as { query: string; uri: string };
      const limit = ((n >> 2) % 4) + 1;
      const expected = n % 2 === 0 ? { uri } : n % 4 === 1 ? [search.uri] : ranked.slice(0, limit);
      const path = n % 2 === 0 ? `/api/v1/object?uri=${encodeURIComponent(uri)}` : n % 4 === 1 ? searchPath(search.query, 20) : searchPath(ALL_WORDS, limit);
      return fetch(`${url}${path}`).then(async (res) => ({ n, path, expected, status: res.status, body: (await res.json()) as Record<string, unknown> }));
    });
    const answers = await Promise.all(calls);
    expect(answers.filter((a) => a.status !== 200).map((a) => `${a.n}: ${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    const got = answers.map((a) => ({ path: a.path, answer: a.n % 2 === 0 ? { uri: a.body.uri } : (a.body as unknown as SearchAnswer).hits.map((hit) => hit.uri) }));
    expect(got).toEqual(answers.map((a) => ({ path: a.path, answer: a.expected })));
    // The four limits really give four different answers, so a crossed-over answer shows.
    expect(new Set(answers.filter((a) => a.n % 4 === 3).map((a) => JSON.stringify(a.expected))).size).toBe(4);
    expect((await fetch(`${url}/api/v1/health/live`)).status).toBe(200);
  });

  it('answers 200 concurrent /mcp tool calls of one session, each id with its own answer', async () => {
    const { url } = served.server;
    const post = (body: unknown, session?: string): Promise<Response> =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...served.server.auth,
          ...(session ? { 'mcp-session-id': session } : {}),
        },
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
