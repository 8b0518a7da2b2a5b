/**
 * Every HTTP route, independent of the server library: a request goes in, a reply comes out.
 * Capability routes come from the catalog; nothing here names a particular capability.
 */
import { CapabilityError, errorMessage } from '../errors.js';
import type { CapabilityCatalog, CapabilityEntry } from '../registry/catalog.js';
import type { CallOutcome } from '../../workers/types.js';
import type { HostGuard } from './guard.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import { inputFromQuery } from './query.js';
import { errorReply, jsonReply, type HttpReply } from './reply.js';
import type { StaticAsset } from './swagger.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpRequest {
  /** Upper case. HEAD is answered as GET; the server library drops the body. */
  method: string;
  path: string;
  query: string;
  host: string;
  origin: string;
  sessionId: string;
  /** `Mcp-Peer-Id` on initialize: the peer id this client had before a takeover. */
  peerHint: string;
  body: Uint8Array;
}

export interface RouterServices {
  catalog: CapabilityCatalog;
  version: string;
  repositoryId: string;
  guard: HostGuard;
  mcp: McpEndpoint;
  openapi: string;
  swagger: ReadonlyMap<string, StaticAsset>;
  invoke(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome>;
  /** How many peers are attached (a copy the main thread keeps current). */
  peerCount(): number;
  leaseholder(): boolean;
  baseUrl(): string;
}

export type Router = (request: HttpRequest) => Promise<HttpReply>;

function outcomeReply(outcome: CallOutcome): HttpReply {
  return outcome.ok ? { status: 200, contentType: 'application/json', body: outcome.json } : errorReply(outcome.code, outcome.message);
}

function parseJsonObject(body: Uint8Array): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch (error) {
    throw new CapabilityError('invalid_json', `the body is not JSON: ${errorMessage(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CapabilityError('invalid_json', 'the body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

export function createRouter(services: RouterServices): Router {
  const routes = new Map<string, Map<string, CapabilityEntry>>();
  for (const entry of services.catalog.entries) {
    const http = entry.exposure.http;
    if (!http) continue;
    const methods = routes.get(http.path) ?? new Map<string, CapabilityEntry>();
    methods.set(http.method, entry);
    routes.set(http.path, methods);
  }

  async function capability(request: HttpRequest, entry: CapabilityEntry): Promise<HttpReply> {
    let caller: string | null = null;
    if (request.sessionId !== '') {
      const peer = services.mcp.peerOf(request.sessionId);
      if (peer === undefined) return errorReply('session_not_found', `no session ${request.sessionId}: it ended or expired`);
      caller = peer;
    }
    const input = entry.exposure.http?.method === 'GET' ? inputFromQuery(request.query, entry.input_schema) : parseJsonObject(request.body);
    return outcomeReply(await services.invoke(entry.id, input, caller));
  }

  // Answered by this thread alone: the liveness probe must not wait on the main thread.
  function root(): HttpReply {
    const base = services.baseUrl();
    return jsonReply(200, {
      name: 'majordomus',
      version: services.version,
      repository_id: services.repositoryId,
      leaseholder: services.leaseholder(),
      surfaces: { docs: `${base}/docs`, openapi: `${base}/openapi.json`, api: `${base}/api/v1/`, mcp: `${base}/mcp` },
      peers: services.peerCount(),
    });
  }

  function allowOnly(methods: readonly string[], method: string): HttpReply | null {
    return methods.includes(method)
      ? null
      : errorReply('method_not_allowed', `${method} is not allowed here; use ${methods.join(' or ')}`);
  }

  async function route(request: HttpRequest): Promise<HttpReply> {
    const refusal = services.guard.refusal(request.host, request.origin);
    if (refusal !== null) return errorReply('forbidden', refusal);
    const { path, method } = request;

    if (path === '/mcp') {
      if (method === 'POST') return services.mcp.post(request.body, request.sessionId, request.peerHint);
      if (method === 'DELETE') return services.mcp.delete(request.sessionId);
      return errorReply('method_not_allowed', `${method} /mcp is not served: this server sends no stream; POST JSON-RPC, DELETE to end`);
    }
    const methods = routes.get(path);
    if (methods) {
      const entry = methods.get(method);
      if (!entry) return allowOnly([...methods.keys()], method) as HttpReply;
      return capability(request, entry);
    }
    if (path === '/') return allowOnly(['GET'], method) ?? root();
    if (path === '/openapi.json') {
      return allowOnly(['GET'], method) ?? { status: 200, contentType: 'application/json', body: services.openapi };
    }
    if (path === '/docs' || path.startsWith('/docs/')) {
      const asset = services.swagger.get(path === '/docs/' ? '' : path.slice('/docs'.length));
      if (asset) return allowOnly(['GET'], method) ?? { status: 200, contentType: asset.contentType, body: asset.body };
    }
    return errorReply('not_found', `no route ${path}`);
  }

  return async (request) => {
    try {
      return await route(request);
    } catch (error) {
      if (error instanceof CapabilityError) return errorReply(error.code, error.message);
      return errorReply('internal', errorMessage(error));
    }
  };
}

