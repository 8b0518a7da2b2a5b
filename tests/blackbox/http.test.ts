/**
 * The HTTP projection of `majordomus serve`, black-box: the built executable on port 0 in a
 * temporary git repository, driven with raw `node:http` requests (a Host header, chunked and
 * oversize bodies, HEAD framing). Covers:
 * - GET /: name, version, repository id, leaseholder true, surfaces at the bound URL, peer count;
 *   the checkout path appears nowhere in it (nor in the repository and objects answers);
 * - GET /openapi.json (OpenAPI 3.1 JSON), GET /docs (Swagger UI page whose every asset is served
 *   by this server, nothing from a CDN);
 * - every capability route under /api/v1/: repository, objects (kind filter), object, search
 *   (query parameters coerced: limit=5 is a number), capabilities (kind filter), capability,
 *   peers, health/live, health/ready;
 * - every refusal answers `{error: {code, message}}` with its status — 400 invalid_input (blank
 *   query, limit 500, limit not a number, unknown kind, unknown or missing parameter), 400
 *   invalid_json (not JSON, an array, a string, null), 403 forbidden (foreign Host, foreign Origin,
 *   on /api and on /mcp), 404 not_found (unknown route, object, capability), 405
 *   method_not_allowed (PUT/POST on a GET route, GET on a POST route, PUT /mcp, POST /, DELETE
 *   /openapi.json), 413 too_large (over 1 MiB with a Content-Length, chunked, and on /mcp), 422
 *   refused (announce over plain REST with no session) — and the server serves the next request;
 * - a loopback Origin or Host (127.0.0.1 or localhost with this port) is let through;
 * - every response carries Content-Length equal to its body length and Cache-Control: no-store;
 *   HEAD answers as GET, with the same status and Content-Length and no body;
 * - many concurrent requests are all answered.
 */
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, type RawRequestOptions, type RawResponse } from '../helpers/serve.js';
import { DOCUMENT_URI, OBJECT_URIS, RULE_URI, serveFixture, type Served } from './http-fixture.js';
import { BUILTIN_CAPABILITY_IDS, BUILTIN_COMMAND_IDS } from '../helpers/builtins.js';

const CAPABILITY_IDS = BUILTIN_CAPABILITY_IDS;

const MIB = 1024 * 1024;

/** Content-Length present and equal to what arrived; Cache-Control: no-store. */
function expectFramed(res: RawResponse): void {
  expect(res.headers['cache-control'], 'Cache-Control').toBe('no-store');
  expect(res.headers['content-length'], 'Content-Length').toBeDefined();
  expect(Number(res.headers['content-length'])).toBe(res.body.length);
}

/** A refusal: its status, `{error: {code, message}}` as JSON, framed like every answer. */
function expectRefusal(res: RawResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json<{ error: { code: string; message: string } }>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  expectFramed(res);
}

describe('serve over HTTP', () => {
  let served: Served;
  let port: number;

  const request = async (options: Omit<RawRequestOptions, 'port'>): Promise<RawResponse> => rawRequest({ ...options, port });
  const get = (path: string, headers?: Record<string, string>): Promise<RawResponse> => request({ path, ...(headers ? { headers } : {}) });
  /** The lease's bearer token, which commands and peer reads need. */
  const auth = (headers: Record<string, string> = {}): Record<string, string> => ({ ...served.server.auth, ...headers });
  const jsonType = { 'Content-Type': 'application/json' };
  const getJson = async <T = any>(path: string, headers?: Record<string, string>): Promise<T> => {
    const res = await get(path, headers);
    expect({ path, status: res.status, body: res.status === 200 ? '' : res.text }).toEqual({ path, status: 200, body: '' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectFramed(res);
    return res.json<T>();
  };
  const expectStillServes = async (): Promise<void> => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.json().name).toBe('majordomus');
  };

  beforeAll(async () => {
    served = await serveFixture();
    port = served.server.port;
  });

  afterAll(async () => {
    await served?.close();
  });

  describe('routes', () => {
    it('GET / names majordomus, its version, the repository id, leaseholder true, the layer generation, the HTTP engine, every surface at the bound URL and the peer count', async () => {
      const body = await getJson('/');
      const url = `http://127.0.0.1:${port}`;
      expect(body).toEqual({
        name: 'majordomus',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        repository_id: expect.stringMatching(/\S/),
        leaseholder: true,
        generation: 1,
        // The one forced on the suite (MAJORDOMUS_HTTP_ENGINE, inherited), else whichever loads here.
        engine: process.env.MAJORDOMUS_HTTP_ENGINE || expect.stringMatching(/^(uws|node)$/),
        authorized: false,
        surfaces: { docs: `${url}/docs`, openapi: `${url}/openapi.json`, api: `${url}/api/v1/`, mcp: `${url}/mcp` },
        peers: 0,
      });
      expect(served.server.url).toBe(url);
    });

    it('GET / and the layer answers never expose the checkout path', async () => {
      const root = served.repo.root;
      for (const path of ['/', '/api/v1/repository', '/api/v1/objects', `/api/v1/object?uri=${encodeURIComponent(RULE_URI)}`, '/api/v1/health/ready']) {
        const res = await get(path);
        expect(res.status, path).toBe(200);
        expect(res.text, path).not.toContain(root);
        expect(res.text, path).not.toContain(basename(root));
      }
    });

    it('GET /api/v1/repository answers the same repository id as GET /', async () => {
      const [server, info] = await Promise.all([getJson('/'), getJson('/api/v1/repository')]);
      expect(info).toMatchObject({ name: 'majordomus', repository_id: server.repository_id, generation: server.generation, discovery: 'vcs', state: 'ok', diagnostics: [] });
      expect(info.counts).toMatchObject({ rule: 2, document: 1, adr: 1 });
    });

    it('GET /openapi.json answers an OpenAPI 3.1 document as JSON', async () => {
      const doc = await getJson('/openapi.json');
      expect(doc.openapi).toMatch(/^3\.1\./);
      expect(doc.info.title).toBe('majordomus');
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/', '/mcp', '/api/v1/objects', '/api/v1/peers/announce']));
    });

    it('GET /docs answers the Swagger UI page, and every asset it names is served by this server', async () => {
      const page = await get('/docs');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expectFramed(page);
      expect(page.text).toContain('swagger-ui');
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      expect(assets.length).toBeGreaterThanOrEqual(3);
      for (const asset of assets) {
        // Nothing from a CDN: every asset is a path of this server.
        expect(asset, asset).toMatch(/^\/docs\//);
        const res = await get(asset);
        expect(res.status, asset).toBe(200);
        expect(res.body.length, asset).toBeGreaterThan(0);
        expectFramed(res);
      }
      const initializer = await get('/docs/initializer.js');
      expect(initializer.status).toBe(200);
      expect(initializer.text).toContain('/openapi.json');
    });

    it('GET /api/v1/objects lists every object, and ?kind= filters by kind', async () => {
      const all = await getJson('/api/v1/objects');
      expect(all.objects.map((o: { uri: string }) => o.uri).sort()).toEqual(OBJECT_URIS);
      const rule = all.objects.find((o: { uri: string }) => o.uri === RULE_URI);
      expect(rule).toMatchObject({ kind: 'rule', identity: 'code/small-modules', title: 'Prefer small modules' });
      expect([...rule.tags].sort()).toEqual(['layout', 'style']);
      expect(rule).not.toHaveProperty('content');
      const rules = await getJson('/api/v1/objects?kind=rule');
      expect(rules.objects.map((o: { uri: string }) => o.uri).sort()).toEqual([RULE_URI, 'majordomus://rule/testing']);
      const tagged = await getJson('/api/v1/objects?tag=layout');
      expect(tagged.objects.map((o: { uri: string }) => o.uri)).toEqual([RULE_URI]);
    });

    it('GET /api/v1/object?uri= answers one object with its content', async () => {
      const object = await getJson(`/api/v1/object?uri=${encodeURIComponent(DOCUMENT_URI)}`);
      expect(object).toMatchObject({
        uri: DOCUMENT_URI,
        id: 'document.architecture/threads',
        kind: 'document',
        title: 'Threads',
        provenance: { path: '.ai/repo/knowledge/architecture/threads.md' },
      });
      expect(object.content).toContain('uWebSockets.js');
    });

    it('GET /api/v1/search coerces query parameters by the input schema (limit=5 is a number)', async () => {
      const some = await getJson('/api/v1/search?query=x&limit=5');
      expect(Array.isArray(some.hits)).toBe(true);
      expect(some.hits.length).toBeLessThanOrEqual(5);
      const found = await getJson('/api/v1/search?query=modules&limit=1');
      expect(found.hits).toHaveLength(1);
      expect(found.hits[0]).toMatchObject({ uri: RULE_URI, kind: 'rule' });
      const byKind = await getJson('/api/v1/search?query=behaviour&kind=rule');
      expect(byKind.hits.map((h: { uri: string }) => h.uri)).toEqual(['majordomus://rule/testing']);
    });

    it('GET /api/v1/capabilities lists every builtin capability, and ?kind=command only the commands', async () => {
      const all = await getJson('/api/v1/capabilities');
      expect(all.capabilities.map((c: { id: string }) => c.id).sort()).toEqual(CAPABILITY_IDS);
      const commands = await getJson('/api/v1/capabilities?kind=command');
      expect(commands.capabilities.map((c: { id: string }) => c.id)).toEqual(BUILTIN_COMMAND_IDS);
    });

    it('GET /api/v1/capability?id= describes one capability with its schemas', async () => {
      const entry = await getJson('/api/v1/capability?id=objects.search');
      expect(entry).toMatchObject({ id: 'objects.search', kind: 'query', exposure: { http: { method: 'GET', path: '/api/v1/search' } } });
      expect(entry.input_schema.properties).toHaveProperty('query');
      expect(entry.output_schema.properties).toHaveProperty('hits');
    });

    it('GET /api/v1/peers answers no caller and no peer when no session is open', async () => {
      expect(await getJson('/api/v1/peers', auth())).toEqual({ you: null, peers: [] });
    });

    it('GET /api/v1/health/live and /health/ready answer while the server serves', async () => {
      expect(await getJson('/api/v1/health/live')).toEqual({ status: 'live' });
      expect(await getJson('/api/v1/health/ready')).toEqual({ status: 'ready', layer: 'ok', objects: 4 });
    });

    it('answers many concurrent requests, each completely', async () => {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => get(i % 2 === 0 ? '/api/v1/search?query=modules' : '/api/v1/objects')),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        expectFramed(res);
      }
    });
  });

  describe('refusals', () => {
    const invalidInput: Array<[string, string]> = [
      ['a blank search query', '/api/v1/search?query=%20'],
      ['a search limit above 200', '/api/v1/search?query=x&limit=500'],
      ['a search limit that is not a number', '/api/v1/search?query=x&limit=many'],
      ['an unknown object kind', '/api/v1/objects?kind=nope'],
      ['an unknown query parameter', '/api/v1/objects?colour=blue'],
      ['a missing required parameter', '/api/v1/object'],
      ['a URI outside majordomus://', '/api/v1/object?uri=https://example.com/'],
    ];
    it.each(invalidInput)('refuses %s with 400 invalid_input and serves on', async (_what, path) => {
      expectRefusal(await get(path), 400, 'invalid_input');
      await expectStillServes();
    });

    const invalidJson: Array<[string, string]> = [
      ['a body that is not JSON', 'nope'],
      ['a JSON array body', '[{"intent":"x"}]'],
      ['a JSON string body', '"announce"'],
      ['a JSON null body', 'null'],
    ];
    it.each(invalidJson)('refuses %s on a POST route with 400 invalid_json and serves on', async (_what, body) => {
      const res = await request({ method: 'POST', path: '/api/v1/peers/announce', body, headers: auth(jsonType) });
      expectRefusal(res, 400, 'invalid_json');
      await expectStillServes();
    });

    it('refuses a foreign Host header with 403 forbidden (DNS rebinding) and serves on', async () => {
      expectRefusal(await get('/', { Host: 'evil.example' }), 403, 'forbidden');
      expectRefusal(await get('/api/v1/objects', { Host: `evil.example:${port}` }), 403, 'forbidden');
      await expectStillServes();
    });

    it('refuses a foreign Origin with 403 forbidden, while the same request from this server\'s origin passes', async () => {
      expectRefusal(await get('/api/v1/objects', { Origin: 'http://evil.example' }), 403, 'forbidden');
      expectRefusal(await get('/api/v1/objects', { Origin: `http://evil.example:${port}` }), 403, 'forbidden');
      const own = await get('/api/v1/objects', { Origin: `http://127.0.0.1:${port}` });
      expect(own.status).toBe(200);
      expectFramed(own);
      expect((await get('/api/v1/objects', { Origin: `http://localhost:${port}` })).status).toBe(200);
      await expectStillServes();
    });

    it('lets a loopback Host naming this port through (127.0.0.1 and localhost)', async () => {
      expect((await get('/', { Host: `127.0.0.1:${port}` })).status).toBe(200);
      expect((await get('/', { Host: `localhost:${port}` })).status).toBe(200);
    });

    it('refuses a foreign Origin or Host on POST /mcp with 403 forbidden before opening a session', async () => {
      const initialize = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'evil', version: '1' } },
      });
      const byOrigin = await request({ method: 'POST', path: '/mcp', body: initialize, headers: { 'Content-Type': 'application/json', Origin: 'http://evil.example' } });
      expectRefusal(byOrigin, 403, 'forbidden');
      expect(byOrigin.headers['mcp-session-id']).toBeUndefined();
      const byHost = await request({ method: 'POST', path: '/mcp', body: initialize, headers: { 'Content-Type': 'application/json', Host: 'evil.example' } });
      expectRefusal(byHost, 403, 'forbidden');
      expect((await getJson('/')).peers).toBe(0);
    });

    const notFound: Array<[string, string]> = [
      ['an unknown route', '/nope'],
      ['an unknown route under /api/v1/', '/api/v1/nope'],
      ['an unknown object', '/api/v1/object?uri=majordomus://rule/nope'],
      ['an unknown capability', '/api/v1/capability?id=nope.nope'],
    ];
    it.each(notFound)('answers %s with 404 not_found and serves on', async (_what, path) => {
      expectRefusal(await get(path), 404, 'not_found');
      await expectStillServes();
    });

    const notAllowed: Array<[string, string, string]> = [
      ['PUT on a capability route', 'PUT', '/api/v1/search?query=x'],
      ['POST on a GET route', 'POST', '/api/v1/objects'],
      ['DELETE on a GET route', 'DELETE', '/api/v1/peers'],
      ['GET on a POST route', 'GET', '/api/v1/peers/announce'],
      ['PUT /mcp', 'PUT', '/mcp'],
      ['POST /', 'POST', '/'],
      ['DELETE /openapi.json', 'DELETE', '/openapi.json'],
    ];
    it.each(notAllowed)('answers %s with 405 method_not_allowed and serves on', async (_what, method, path) => {
      const res = await request({ method, path, ...(method === 'POST' || method === 'PUT' ? { body: '{}' } : {}) });
      expectRefusal(res, 405, 'method_not_allowed');
      await expectStillServes();
    });

    it('refuses a body over 1 MiB sent with a Content-Length with 413 too_large and serves on', async () => {
      const body = Buffer.alloc(MIB + 1024, 0x20);
      const res = await request({ method: 'POST', path: '/api/v1/peers/announce', body, headers: { 'Content-Type': 'application/json' } });
      expectRefusal(res, 413, 'too_large');
      await expectStillServes();
    });

    it('refuses a chunked body that grows over 1 MiB with 413 too_large and serves on', async () => {
      const body = Buffer.alloc(MIB + 64 * 1024, 0x20);
      const res = await request({ method: 'POST', path: '/api/v1/peers/announce', body, chunked: 64 * 1024, headers: { 'Content-Type': 'application/json' } });
      expectRefusal(res, 413, 'too_large');
      await expectStillServes();
    });

    it('refuses a body over 1 MiB on POST /mcp with 413 too_large and serves on', async () => {
      const body = Buffer.alloc(MIB + 1, 0x20);
      expectRefusal(await request({ method: 'POST', path: '/mcp', body, headers: { 'Content-Type': 'application/json' } }), 413, 'too_large');
      expectRefusal(await request({ method: 'POST', path: '/mcp', body, chunked: 100_000, headers: { 'Content-Type': 'application/json' } }), 413, 'too_large');
      await expectStillServes();
    });

    it('accepts a body of exactly 1 MiB (the limit is "over 1 MiB")', async () => {
      // A JSON object padded with spaces to exactly 1 MiB: well-formed, refused only for having no session.
      const json = '{"intent":"fill"}';
      const body = Buffer.concat([Buffer.from(json), Buffer.alloc(MIB - json.length, 0x20)]);
      expect(body.length).toBe(MIB);
      expectRefusal(await request({ method: 'POST', path: '/api/v1/peers/announce', body, headers: auth(jsonType) }), 422, 'refused');
    });

    it('refuses an announcement over plain REST with no session with 422 refused and serves on', async () => {
      const res = await request({
        method: 'POST',
        path: '/api/v1/peers/announce',
        body: JSON.stringify({ intent: 'refactor the router', paths: ['src/http'] }),
        headers: auth(jsonType),
      });
      expectRefusal(res, 422, 'refused');
      // An empty body is {} and reaches the capability too.
      expectRefusal(await request({ method: 'POST', path: '/api/v1/peers/announce', headers: auth() }), 400, 'invalid_input');
      await expectStillServes();
      expect(await getJson('/api/v1/peers', auth())).toEqual({ you: null, peers: [] });
    });
  });

  describe('framing', () => {
    const paths = [
      '/',
      '/openapi.json',
      '/docs',
      '/docs/swagger-ui-bundle.js',
      '/docs/favicon-32x32.png',
      '/api/v1/objects',
      '/api/v1/search?query=modules&limit=5',
      '/api/v1/health/live',
      '/nope',
      '/api/v1/search?query=%20',
    ];

    it.each(paths)('GET %s carries Content-Length equal to the body length and Cache-Control: no-store', async (path) => {
      const res = await get(path);
      expectFramed(res);
      expect(res.body.length).toBeGreaterThan(0);
    });

    it.each(paths)('HEAD %s answers like GET: same status and Content-Length, no body', async (path) => {
      const full = await get(path);
      const head = await request({ method: 'HEAD', path });
      expect(head.status).toBe(full.status);
      expect(head.headers['cache-control']).toBe('no-store');
      expect(head.headers['content-type']).toBe(full.headers['content-type']);
      expect(head.headers['content-length']).toBe(String(full.body.length));
      expect(head.body.length).toBe(0);
      await expectStillServes();
    });
  });
});
