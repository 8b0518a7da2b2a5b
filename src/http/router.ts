/**
 * Every HTTP route, independent of the server library: a request goes in, a reply comes out.
 * Capability routes come from the catalog; nothing here names a particular capability.
 */
import { CapabilityError, errorMessage, wireErrorBody, WIRE_ERRORS } from '../platform/errors.js';
import { decodeUtf8, JsonInputError, parseJsonInput } from '../platform/json-input.js';
import type { CapabilityCatalog, CapabilityEntry } from '../registry/catalog.js';
import type { CallOutcome } from '../platform/call.js';
import { bearerMatches, type HostGuard } from '../platform/access.js';
import type { HttpEngine } from '../platform/settings.js';
import type { McpEndpoint } from './mcp-endpoint.js';
import { inputFromQuery } from './query.js';
import { errorReply, jsonReply, type HttpReply, type HttpRequest, type RouteReply } from '../platform/http-exchange.js';
import { acceptsEventStream } from './sse.js';
import type { StaticAsset } from './swagger.js';
import { prefersHtml, type PageAssets } from '../page/assets.js';

export interface RouterServices {
  catalog: CapabilityCatalog;
  version: string;
  repositoryId: string;
  /** The lease's token: protected requests carry it as `Authorization: Bearer <token>`. */
  token: string;
  guard: HostGuard;
  mcp: McpEndpoint;
  openapi: string;
  swagger: ReadonlyMap<string, StaticAsset>;
  invoke(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome>;
  /** How many peers are attached (a copy the main thread keeps current). */
  peerCount(): number;
  leaseholder(): boolean;
  /** The layer generation this thread serves (1 at start, +1 per reload). */
  generation(): number;
  baseUrl(): string;
  /** The library serving HTTP (src/http/engine.ts): `uws`, or `node` where uWS cannot load. */
  engine(): HttpEngine;
  /**
   * The model gateway (src/gateway/): OpenAI's wire, not ours, so its paths bypass the capability
   * routes; it checks the token itself (it also takes its own key) and shapes its own errors.
   */
  gateway: { paths: ReadonlySet<string>; handle(request: HttpRequest): Promise<RouteReply> };
  /**
   * The live page (src/page/): `GET /` from a browser, its files under `/page/`. They hold no
   * data (the data comes over the `/live` feed, which asks for the token), so they need none.
   */
  page?: PageAssets;
}

/** The live page's feed: a WebSocket, opened by the server library before any route runs. */
export const LIVE_PATH = '/live';

export type Router = (request: HttpRequest) => Promise<RouteReply>;

function outcomeReply(outcome: CallOutcome): HttpReply {
  if (outcome.ok) return { status: 200, contentType: 'application/json', body: outcome.json };
  if (outcome.retryAfterMs === undefined) return errorReply(outcome.code, outcome.message);
  // A refusal that passes says when, in the body (ms) and in HTTP's own header (whole seconds).
  return jsonReply(WIRE_ERRORS[outcome.code].status, wireErrorBody(outcome.code, outcome.message, outcome.retryAfterMs), [
    ['Retry-After', String(Math.ceil(outcome.retryAfterMs / 1000))],
  ]);
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
export function isJsonMediaType(contentType: string): boolean {
  return /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/** A body that must be a JSON object: UTF-8, `application/json`, bounded nesting; empty = `{}`. */
function parseJsonObject(request: HttpRequest): Record<string, unknown> {
  if (request.body.byteLength === 0) return {};
  if (!isJsonMediaType(request.contentType)) {
    throw new CapabilityError('unsupported_media_type', `send the body as application/json, not ${JSON.stringify(request.contentType || 'no Content-Type')}`);
  }
  let value: unknown;
  try {
    value = parseJsonInput(decodeUtf8(request.body));
  } catch (error) {
    if (error instanceof JsonInputError) throw new CapabilityError('invalid_json', `the body is not usable JSON: ${error.message}`);
    throw error;
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
    const input = entry.exposure.http?.method === 'GET' ? inputFromQuery(request.query, entry.input_schema) : parseJsonObject(request);
    return outcomeReply(await services.invoke(entry.id, input, caller));
  }

  // Answered by this thread alone: the liveness probe must not wait on the main thread.
  function root(request: HttpRequest): HttpReply {
    const base = services.baseUrl();
    return jsonReply(200, {
      name: 'majordomus',
      version: services.version,
      repository_id: services.repositoryId,
      leaseholder: services.leaseholder(),
      generation: services.generation(),
      engine: services.engine(),
      // Whether the request carried this server's token: how a lease's probe knows it reached
      // the server that wrote the lease.
      authorized: authorized(request),
      surfaces: { docs: `${base}/docs`, openapi: `${base}/openapi.json`, api: `${base}/api/v1/`, mcp: `${base}/mcp` },
      peers: services.peerCount(),
    });
  }

  /** 405 naming (and, in `Allow`, listing) the methods the route takes; HEAD goes with GET. */
  function allowOnly(methods: readonly string[], method: string, hint = ''): HttpReply | null {
    if (methods.includes(method)) return null;
    const allowed = methods.includes('GET') ? [...methods, 'HEAD'] : [...methods];
    const reply = errorReply('method_not_allowed', `${method} is not allowed here; use ${methods.join(' or ')}${hint}`);
    return { ...reply, headers: [['Allow', allowed.join(', ')]] };
  }

  const unauthorized = (): HttpReply => ({
    ...errorReply('unauthorized', 'send Authorization: Bearer <token>, the token of the checkout\'s lease (.ai/local/state/mcp/server.json by default, readable by its owner only)'),
    headers: [['WWW-Authenticate', 'Bearer realm="majordomus"']],
  });
  const authorized = (request: HttpRequest): boolean => bearerMatches(request.authorization, services.token);
  /** On a loopback bind the layer's read-only surface stays open; elsewhere everything needs the token. */
  const openWithoutToken = (): boolean => services.guard.loopbackOnly;

  async function route(request: HttpRequest): Promise<RouteReply> {
    const refusal = services.guard.refusal(request.host, request.origin);
    if (refusal !== null) return errorReply('forbidden', refusal);
    const { path, method } = request;

    if (services.gateway.paths.has(path)) return services.gateway.handle(request);
    const page = services.page;
    if (page && path === '/' && method === 'GET' && prefersHtml(request.accept)) return page.page(request.host);
    if (page && path.startsWith('/page/')) {
      const asset = page.asset(path);
      if (asset) return allowOnly(['GET'], method) ?? asset;
    }
    if (path === LIVE_PATH) {
      return errorReply('not_acceptable', 'GET /live opens the live page\'s WebSocket (Upgrade: websocket); open / in a browser');
    }
    if (path === '/mcp') {
      const wrongMethod = allowOnly(
        ['GET', 'POST', 'DELETE'],
        method,
        ': POST a JSON-RPC message, GET (Accept: text/event-stream) to open the session\'s stream, DELETE to end the session',
      );
      if (wrongMethod) return wrongMethod;
      if (!authorized(request)) return unauthorized();
      if (method === 'DELETE') return services.mcp.delete(request.sessionId);
      if (method === 'GET') return services.mcp.openStream(request.sessionId, acceptsEventStream(request.accept), request.lastEventId);
      if (!isJsonMediaType(request.contentType)) {
        return errorReply('unsupported_media_type', `POST /mcp takes application/json, not ${JSON.stringify(request.contentType || 'no Content-Type')}`);
      }
      return services.mcp.post(request.body, request.sessionId, request.peerHint, acceptsEventStream(request.accept), request.spawnDepth, request.clientPids);
    }
    const methods = routes.get(path);
    if (methods) {
      const entry = methods.get(method);
      if (!entry) return allowOnly([...methods.keys()], method) as HttpReply;
      if (!(entry.access === 'open' && openWithoutToken()) && !authorized(request)) return unauthorized();
      return capability(request, entry);
    }
    if (!openWithoutToken() && !authorized(request)) return unauthorized();
    if (path === '/') return allowOnly(['GET'], method) ?? root(request);
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

