/**
 * What every HTTP engine of the HTTP thread implements (uWebSockets.js in src/http/uws-*.ts,
 * node:http in src/http/node-*.ts; src/http/engine.ts chooses), and the decisions both must make
 * the same way: which headers a route reads, when a body is read, dropped or refused. Keeping them
 * here means the two adapters cannot drift apart on a limit or a header.
 */
import type { HttpEngine } from '../platform/settings.js';
import type { LiveConnection, LiveSocket } from '../page/feed.js';
import { GATEWAY_PATHS } from '../gateway/gateway.js';
import { errorReply, MAX_BODY_BYTES, type HttpReply, type HttpRequest, type RouteReply } from '../platform/http-exchange.js';

/** What answers a request (the router). */
export type RequestHandler = (request: HttpRequest) => Promise<RouteReply>;

/** A WebSocket route: who may open it (checked on the upgrade request), and what serves each socket. */
export interface LiveRoute {
  path: string;
  /** Frames larger than this close the socket (1009). */
  maxFrameBytes: number;
  /** Null to accept the upgrade, else the reply that refuses it (Host/Origin, capacity). */
  refusal(host: string, origin: string): HttpReply | null;
  open(socket: LiveSocket): LiveConnection;
}

export interface ServerOptions {
  host: string;
  port: number;
  /** Try a free port when `port` is taken. */
  fallbackToFreePort: boolean;
  handle: RequestHandler;
  /** A WebSocket route (the live page's feed), when the server has one. */
  live?: LiveRoute;
}

/** A bound server of either engine. */
export interface ListeningServer {
  readonly engine: HttpEngine;
  readonly port: number;
  readonly requestedPort: number;
  /** Stops listening and closes every connection, WebSockets and open streams included. Safe to call twice. */
  close(): void;
}

export type ServerStart = { ok: true; server: ListeningServer } | { ok: false; reason: string };

/**
 * Binds the port asked for or, when it is taken and the caller allows it, a free one (the same
 * rule for both engines): the bound port, or the reason nothing could be bound.
 */
export async function bindPort(
  listen: (host: string, port: number) => Promise<number | null>,
  options: Pick<ServerOptions, 'host' | 'port' | 'fallbackToFreePort'>,
): Promise<{ port: number } | { reason: string }> {
  let port = await listen(options.host, options.port);
  if (port === null && options.fallbackToFreePort && options.port !== 0) port = await listen(options.host, 0);
  return port === null ? { reason: `cannot listen on ${options.host}:${options.port}` } : { port };
}

/** An oversized body is read and dropped up to this much (so the client reads the 413), then cut off. */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * A model request carries a whole conversation (Claude Code's run to hundreds of kilobytes of
 * text, more with images): the gateway's paths take bodies up to this, every other route 1 MiB.
 */
export const MODEL_BODY_BYTES = 32 * 1024 * 1024;

/** How large a body a route takes, and how much of a larger one is drained before the connection is cut. */
export interface BodyBound {
  max: number;
  drain: number;
}

const ROUTE_BOUND: BodyBound = { max: MAX_BODY_BYTES, drain: DRAIN_LIMIT_BYTES };
const MODEL_BOUND: BodyBound = { max: MODEL_BODY_BYTES, drain: MODEL_BODY_BYTES + DRAIN_LIMIT_BYTES };

/** The bound of the route at `path`: the gateway's model paths, or every other route's. */
export function bodyBoundFor(path: string): BodyBound {
  return GATEWAY_PATHS.has(path) ? MODEL_BOUND : ROUTE_BOUND;
}

/** A WebSocket that has been silent this long is closed; each engine pings it well before. */
export const LIVE_IDLE_SECONDS = 120;

/** The same for both engines: one wording for a body over the bound. */
export function tooLargeReply(bound: BodyBound): HttpReply {
  return errorReply('too_large', `the body is larger than ${bound.max} bytes`);
}

/**
 * What to do with a request's body, from its method and declared `Content-Length` ('' when none):
 * `refuse` (larger than the drain limit: answer 413 at once and close the connection), `none`
 * (dispatch without reading: GET, HEAD, a DELETE without a length), or `read` (with `tooLarge`
 * already known when the declared length is over the bound).
 */
export type BodyPlan = { kind: 'refuse' } | { kind: 'none' } | { kind: 'read'; tooLarge: boolean };

export function bodyPlan(method: string, declaredLength: string, bound: BodyBound): BodyPlan {
  const declared = declaredLength === '' ? null : Number(declaredLength);
  if (declared !== null && declared > bound.drain) return { kind: 'refuse' };
  const tooLarge = declared !== null && declared > bound.max;
  if (!tooLarge && (method === 'GET' || method === 'HEAD' || (method === 'DELETE' && declared === null))) return { kind: 'none' };
  return { kind: 'read', tooLarge };
}

/**
 * Whether the client went away before its reply ended, as a signal made only when a route asks
 * for one (the gateway, a stream): most requests are answered without anyone listening, and an
 * `AbortController` per request was a measurable share of the HTTP thread's time.
 */
export class ClientGone {
  #controller: AbortController | null = null;
  #gone = false;

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#gone) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** The client went away: the signal aborts (now, or as it is made). */
  abort(): void {
    this.#gone = true;
    this.#controller?.abort();
  }
}

/**
 * The request a route reads, from the engine's header lookup (lower-case names, '' when absent).
 * HEAD is handed to the router as GET; the engine writes the head alone.
 */
export function routeRequest(method: string, path: string, query: string, header: (name: string) => string, gone: ClientGone): HttpRequest {
  return {
    method: method === 'HEAD' ? 'GET' : method,
    path,
    query,
    host: header('host'),
    origin: header('origin'),
    authorization: header('authorization'),
    apiKey: header('x-api-key'),
    contentType: header('content-type'),
    accept: header('accept'),
    sessionId: header('mcp-session-id'),
    peerHint: header('mcp-peer-id'),
    spawnDepth: header('mcp-spawn-depth'),
    clientPids: header('mcp-client-pids'),
    lastEventId: header('last-event-id'),
    task: header('x-majordomus-task'),
    body: new Uint8Array(0),
    get signal() {
      return gone.signal;
    },
  };
}
