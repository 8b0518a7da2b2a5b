/**
 * The OpenAPI 3.1 document, generated from the registry's catalog and the error catalogue. The
 * server answers `/openapi.json` with it and `generate` writes the same bytes to docs/generated/.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../platform/errors.js';
import { HTTP_ENGINES } from '../platform/settings.js';
import type { CapabilityCatalog, CapabilityEntry, JsonSchema } from '../registry/catalog.js';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

function errorResponse(description: string): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: ERROR_REF } } };
}

function errorResponses(codes: readonly WireErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = WIRE_ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [String(status), errorResponse(list.join(', '))]),
  );
}

const COMMON_ERRORS: readonly WireErrorCode[] = ['forbidden', 'internal', 'busy'];

/** The bearer token of the checkout's lease (SPEC §7). */
const BEARER = 'leaseToken';
const NEEDS_TOKEN = { security: [{ [BEARER]: [] }] };

/** Query parameters from the top-level properties of an object input schema. */
function queryParameters(schema: JsonSchema): unknown[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

function operation(entry: CapabilityEntry): Record<string, unknown> {
  const method = entry.exposure.http?.method;
  const namespace = entry.id.split('.')[0] ?? entry.id;
  const refusals: WireErrorCode[] = ['invalid_input', 'not_found', 'refused'];
  if (method === 'POST') refusals.push('invalid_json', 'too_large', 'unsupported_media_type');
  if (entry.access === 'token') refusals.push('unauthorized');
  refusals.push(...(entry.refusals ?? []));
  const op: Record<string, unknown> = {
    operationId: entry.id,
    summary: entry.title,
    description: entry.description,
    tags: [namespace],
    'x-capability-kind': entry.kind,
    'x-stability': entry.stability,
    ...(entry.access === 'token' ? NEEDS_TOKEN : {}),
  };
  if (method === 'GET') {
    op.parameters = queryParameters(entry.input_schema);
  } else {
    op.requestBody = {
      required: false,
      description: 'A JSON object; an empty body is {}.',
      content: { 'application/json': { schema: entry.input_schema } },
    };
  }
  op.responses = {
    '200': { description: entry.title, content: { 'application/json': { schema: entry.output_schema } } },
    ...errorResponses([...refusals, ...COMMON_ERRORS]),
  };
  return op;
}

const JSON_OBJECT = { type: 'object', additionalProperties: true };

function fixedPaths(): Record<string, unknown> {
  return {
    '/': {
      get: {
        operationId: 'server.describe',
        summary: 'This server',
        description: 'Names the server, the repository id, whether it holds the lease, its surfaces and its peers.',
        tags: ['server'],
        responses: {
          '200': {
            description: 'This server',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['name', 'version', 'repository_id', 'leaseholder', 'authorized', 'engine', 'surfaces', 'peers'],
                  properties: {
                    name: { const: 'majordomus' },
                    version: { type: 'string' },
                    repository_id: { type: 'string' },
                    leaseholder: { type: 'boolean' },
                    authorized: { type: 'boolean', description: "Whether the request carried this server's bearer token (how a lease's probe recognises the server that wrote it)." },
                    engine: {
                      enum: [...HTTP_ENGINES],
                      description: 'The library serving HTTP: `uws` (uWebSockets.js), or `node` (node:http) where uWebSockets.js cannot load or MAJORDOMUS_HTTP_ENGINE=node.',
                    },
                    surfaces: {
                      type: 'object',
                      properties: {
                        docs: { type: 'string' },
                        openapi: { type: 'string' },
                        api: { type: 'string' },
                        mcp: { type: 'string' },
                      },
                    },
                    peers: { type: 'integer' },
                  },
                },
              },
            },
          },
          ...errorResponses(COMMON_ERRORS),
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'server.openapi',
        summary: 'This document',
        tags: ['server'],
        responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: JSON_OBJECT } } } },
      },
    },
    '/docs': {
      get: {
        operationId: 'server.docs',
        summary: 'Swagger UI',
        tags: ['server'],
        responses: { '200': { description: 'The Swagger UI page', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
    '/mcp': {
      get: {
        operationId: 'mcp.stream',
        summary: "Open the session's event stream",
        description:
          "MCP Streamable HTTP's server-to-client stream of a session (Accept: text/event-stream): the notifications that belong to no request, as `message` events, and a keep-alive comment every 15 s. A later GET replaces it; DELETE ends it.",
        tags: ['mcp'],
        ...NEEDS_TOKEN,
        parameters: [{ name: 'Mcp-Session-Id', in: 'header', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errorResponses(['session_required', 'unauthorized', 'session_not_found', 'not_acceptable', ...COMMON_ERRORS]),
        },
      },
      post: {
        operationId: 'mcp.post',
        summary: 'MCP over HTTP',
        description:
          'One JSON-RPC message per request. `initialize` issues the Mcp-Session-Id header; every other request must carry it. The answer is JSON, except for a request carrying `_meta.progressToken` from a client that accepts text/event-stream: that one is answered as an event stream of its progress notifications, its response last.',
        tags: ['mcp'],
        ...NEEDS_TOKEN,
        parameters: [{ name: 'Mcp-Session-Id', in: 'header', required: false, schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'application/json': { schema: JSON_OBJECT } } },
        responses: {
          '200': {
            description: 'The JSON-RPC response, or (a request that asked for progress) an event stream ending with it',
            content: { 'application/json': { schema: JSON_OBJECT }, 'text/event-stream': { schema: { type: 'string' } } },
          },
          '202': { description: 'Accepted: the message was a notification' },
          ...errorResponses(['invalid_json', 'session_required', 'unauthorized', 'session_not_found', 'lease_lost', 'too_large', 'unsupported_media_type', ...COMMON_ERRORS]),
        },
      },
      delete: {
        operationId: 'mcp.delete',
        summary: 'End an MCP session',
        tags: ['mcp'],
        ...NEEDS_TOKEN,
        parameters: [{ name: 'Mcp-Session-Id', in: 'header', required: true, schema: { type: 'string' } }],
        responses: {
          '204': { description: 'The session ended' },
          ...errorResponses(['session_required', 'unauthorized', 'session_not_found', ...COMMON_ERRORS]),
        },
      },
    },
  };
}

/** The document as served and as written to docs/generated/openapi.json: the same bytes. */
export function openApiText(catalog: CapabilityCatalog, version: string): string {
  return `${JSON.stringify(openApiDocument(catalog, version), null, 2)}\n`;
}

export function openApiDocument(catalog: CapabilityCatalog, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = fixedPaths() as Record<string, Record<string, unknown>>;
  for (const entry of catalog.entries) {
    const http = entry.exposure.http;
    if (!http) continue;
    paths[http.path] = { ...(paths[http.path] ?? {}), [http.method.toLowerCase()]: operation(entry) };
  }
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'majordomus',
      version,
      description:
        "The repository's .ai layer and the peers of this checkout, projected from majordomus' capability registry.",
    },
    paths: sortedPaths,
    components: {
      securitySchemes: {
        [BEARER]: {
          type: 'http',
          scheme: 'bearer',
          description:
            "The `token` of the checkout's lease (`.ai/local/state/mcp/server.json`, readable by its owner only). Needed by /mcp, by every command and by every capability that reads peers or acts on the machine; on a non-loopback bind, by everything.",
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: Object.keys(WIRE_ERRORS) },
                message: { type: 'string' },
                retry_after_ms: { type: 'integer', minimum: 1, description: 'With a refusal that passes (rate_limited): when to try again, in ms.' },
              },
            },
          },
        },
      },
    },
  };
}
