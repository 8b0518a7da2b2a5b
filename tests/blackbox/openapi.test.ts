/**
 * The OpenAPI document `serve` answers at /openapi.json, black-box on port 0 in a temporary git
 * repository. Covers:
 * - it is a valid OpenAPI 3.1 document under an independent validator
 *   (@seriousme/openapi-schema-validator);
 * - it is what `generate` wrote to docs/generated/openapi.json: the same JSON, and the same bytes;
 * - every capability with an HTTP exposure (per `capabilities list --format json` and per
 *   GET /api/v1/capabilities, which agree) has its path and method in it, with the capability id
 *   as operationId; operationIds are unique;
 * - every path and method in it is served: with valid inputs each answers something other than
 *   404, and a status the operation documents.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, runCli } from '../helpers/cli.js';
import { rawRequest, type RawRequestOptions, type RawResponse } from '../helpers/serve.js';
import { RULE_URI, serveFixture, type Served } from './http-fixture.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  responses: Record<string, unknown>;
}

type OpenApi = { openapi: string; paths: Record<string, Record<string, Operation>> };

interface HttpCapability {
  id: string;
  exposure: { http?: { method: string; path: string } };
}

/** Valid inputs for the operations that need some, by operationId. */
const VALID_INPUT: Record<string, Pick<RawRequestOptions, 'path' | 'body' | 'headers'> & { query?: string }> = {
  'objects.get': { query: `uri=${encodeURIComponent(RULE_URI)}` },
  'objects.list': { query: 'kind=rule' },
  'objects.search': { query: 'query=modules&limit=5' },
  'capabilities.describe': { query: 'id=objects.list' },
  'capabilities.list': { query: 'kind=query' },
  // Well-formed; refused (422): no such session. Served, not missing.
  'harness.session_read': { query: 'session=00000000-0000-4000-8000-000000000000' },
  'harness.session_status': { query: 'session=00000000-0000-4000-8000-000000000000' },
  'harness.session_resource': { query: 'session=00000000-0000-4000-8000-000000000000&part=status' },
  'harness.turn_resource': { query: 'session=00000000-0000-4000-8000-000000000000&turn=1&part=status' },
  'harness.session_kill': { body: JSON.stringify({ session: '00000000-0000-4000-8000-000000000000' }), headers: { 'Content-Type': 'application/json' } },
  'harness.session_send': { body: JSON.stringify({ session: '00000000-0000-4000-8000-000000000000', prompt: 'go on' }), headers: { 'Content-Type': 'application/json' } },
  // No profile of the fixture is nominated: refused (422) before anything starts.
  'harness.spawn': { body: JSON.stringify({ profile: 'none', prompt: 'hello' }), headers: { 'Content-Type': 'application/json' } },
  // Well-formed; refused (422): no such task, or no executor profile nominated.
  'tasks.check_task': { query: 'task_id=00000000-0000-4000-8000-000000000000' },
  'tasks.cancel_task': { body: JSON.stringify({ task_id: '00000000-0000-4000-8000-000000000000' }), headers: { 'Content-Type': 'application/json' } },
  'tasks.reply_task': { body: JSON.stringify({ task_id: '00000000-0000-4000-8000-000000000000', message: 'yes' }), headers: { 'Content-Type': 'application/json' } },
  'tasks.run_task': { body: JSON.stringify({ task: 'hello' }), headers: { 'Content-Type': 'application/json' } },
  // Installs a hook in the fixture's own temporary repository; uninstall removes it again.
  'guard.install': { body: JSON.stringify({ mode: 'warn', hooks: ['pre-push'] }), headers: { 'Content-Type': 'application/json' } },
  'guard.uninstall': { body: JSON.stringify({}), headers: { 'Content-Type': 'application/json' } },
  // Well-formed; refused (422) because plain REST has no session: served, not missing.
  'peers.announce': { body: JSON.stringify({ intent: 'check the document', paths: ['docs'] }), headers: { 'Content-Type': 'application/json' } },
  // Well-formed; refused (422): claiming needs an MCP session. Served, not missing.
  'claims.claim': { body: JSON.stringify({ paths: ['src'], intent: 'check the document' }), headers: { 'Content-Type': 'application/json' } },
  'claims.renew': { body: JSON.stringify({}), headers: { 'Content-Type': 'application/json' } },
  'claims.release': { body: JSON.stringify({}), headers: { 'Content-Type': 'application/json' } },
  // An empty id list is refused (400): served, not missing.
  'claims.release_stale': { body: JSON.stringify({ ids: [] }), headers: { 'Content-Type': 'application/json' } },
  'claims.check': { query: 'paths=src/index.ts' },
  'messages.send': { body: JSON.stringify({ to: ['overseer'], body: 'a note to myself' }), headers: { 'Content-Type': 'application/json' } },
  'messages.ack': { body: JSON.stringify({ ids: [] }), headers: { 'Content-Type': 'application/json' } },
  'messages.thread': { query: 'thread=' },
  'messages.search': { query: 'query=note' },
  'mcp.post': {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi-test', version: '1' } },
    }),
    headers: { 'Content-Type': 'application/json' },
  },
};

function operations(doc: OpenApi): Array<{ path: string; method: string; operation: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

describe('GET /openapi.json', () => {
  let served: Served;
  let text: string;
  let doc: OpenApi;
  const request = (options: Omit<RawRequestOptions, 'port'>): Promise<RawResponse> => rawRequest({ ...options, port: served.server.port });

  beforeAll(async () => {
    served = await serveFixture();
    const res = await request({ path: '/openapi.json' });
    expect(res.status).toBe(200);
    text = res.text;
    doc = JSON.parse(text) as OpenApi;
  });

  afterAll(async () => {
    await served?.close();
  });

  it('is a valid OpenAPI 3.1 document under an independent validator', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    if (!result.valid) console.error('OpenAPI validation errors:', JSON.stringify(result.errors, null, 2));
    expect(result.valid, JSON.stringify(result.errors, null, 2)).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has the content generate wrote to docs/generated/openapi.json', async () => {
    const generated = JSON.parse(await readFile(join(PACKAGE_ROOT, 'docs/generated/openapi.json'), 'utf8'));
    expect(doc, 'docs/generated/openapi.json is stale: run `majordomus generate`').toEqual(generated);
  });

  it('is byte-identical to docs/generated/openapi.json', async () => {
    const generated = await readFile(join(PACKAGE_ROOT, 'docs/generated/openapi.json'));
    const servedBytes = Buffer.from(text, 'utf8');
    const firstDifference = [...servedBytes].findIndex((byte, i) => generated[i] !== byte);
    expect(
      { length: servedBytes.length, firstDifference },
      `served ${servedBytes.length} bytes, the file has ${generated.length}`,
    ).toEqual({ length: generated.length, firstDifference: -1 });
    expect(servedBytes.equals(generated)).toBe(true);
  });

  it('names every capability with an HTTP exposure at its path and method, with the capability id as operationId', async () => {
    const cli = await runCli(['capabilities', 'list', '--format', 'json'], { cwd: served.repo.root });
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = (JSON.parse(cli.stdout) as { capabilities: HttpCapability[] }).capabilities;
    const fromApi = (await request({ path: '/api/v1/capabilities' })).json<{ capabilities: HttpCapability[] }>().capabilities;
    const routes = (list: HttpCapability[]): string[] =>
      list.flatMap((c) => (c.exposure.http ? [`${c.exposure.http.method} ${c.exposure.http.path} ${c.id}`] : [])).sort();
    expect(routes(fromApi)).toEqual(routes(fromCli));
    expect(routes(fromCli).length).toBeGreaterThanOrEqual(10);

    for (const capability of fromCli) {
      const http = capability.exposure.http;
      if (!http) continue;
      const operation = doc.paths[http.path]?.[http.method.toLowerCase()];
      expect(operation, `${http.method} ${http.path} (${capability.id})`).toBeDefined();
      expect(operation?.operationId).toBe(capability.id);
      expect(http.path.startsWith('/api/v1/')).toBe(true);
    }
    const ids = operations(doc).map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('serves every path and method it documents: none answers 404, each answers a status it documents', async () => {
    const answered: string[] = [];
    let sessionId: string | undefined;
    // mcp.delete needs the session mcp.post opened: run the POSTs first.
    const all = operations(doc).sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    for (const { path, method, operation } of all) {
      const id = operation.operationId as string;
      const input = VALID_INPUT[id] ?? {};
      const required = (operation.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name);
      for (const name of required) {
        expect(input.query ?? '', `${id} needs a value for its required parameter ${name} in VALID_INPUT`).toMatch(new RegExp(`(^|&)${name}=`));
      }
      const headers: Record<string, string> = { ...(input.headers ?? {}), ...(operation.security ? served.server.auth : {}) };
      if (id === 'mcp.delete' && sessionId !== undefined) headers['Mcp-Session-Id'] = sessionId;
      const res = await request({
        method: method.toUpperCase(),
        path: input.query ? `${path}?${input.query}` : path,
        headers,
        ...(input.body !== undefined ? { body: input.body } : {}),
      });
      if (id === 'mcp.post') sessionId = res.headers['mcp-session-id'] as string | undefined;
      answered.push(`${method.toUpperCase()} ${path} → ${res.status}`);
      expect(res.status, `${method.toUpperCase()} ${path}: ${res.text.slice(0, 300)}`).not.toBe(404);
      expect(Object.keys(operation.responses), `${method.toUpperCase()} ${path} answered ${res.status}: ${res.text.slice(0, 300)}`).toContain(
        String(res.status),
      );
    }
    expect(sessionId).toBeDefined();
    expect(answered.length).toBe(operations(doc).length);
  });

  it('offers the lease\'s bearer scheme, and the operations that name it answer 401 without the token while the others serve without it', async () => {
    const schemes = (doc as unknown as { components: { securitySchemes: Record<string, { type: string; scheme: string }> } }).components.securitySchemes;
    expect(Object.values(schemes)).toEqual([expect.objectContaining({ type: 'http', scheme: 'bearer' })]);
    let guarded = 0;
    for (const { path, method, operation } of operations(doc)) {
      const input = VALID_INPUT[operation.operationId as string] ?? {};
      const res = await request({
        method: method.toUpperCase(),
        path: input.query ? `${path}?${input.query}` : path,
        headers: { ...(input.headers ?? {}) },
        ...(input.body !== undefined ? { body: input.body } : {}),
      });
      if (operation.security) {
        guarded += 1;
        expect(res.status, `${method.toUpperCase()} ${path}`).toBe(401);
        expect(Object.keys(operation.responses)).toContain('401');
      } else {
        expect(res.status, `${method.toUpperCase()} ${path}: ${res.text.slice(0, 200)}`).not.toBe(401);
      }
    }
    // /mcp (POST and DELETE), the announcement and the peer list at least.
    expect(guarded).toBeGreaterThanOrEqual(4);
  });
});
