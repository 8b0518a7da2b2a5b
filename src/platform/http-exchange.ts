/**
 * An HTTP exchange before and after any server library: the request a route reads and what it
 * answers, a whole body or a stream. The uWS adapter (src/http/uws-server.ts) translates both.
 */
import { wireErrorBody, type WireErrorCode, WIRE_ERRORS } from './errors.js';

/** The largest request body any route reads (a larger one is refused with 413). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpRequest {
  /** Upper case. HEAD is answered as GET; the server library drops the body. */
  method: string;
  path: string;
  query: string;
  host: string;
  origin: string;
  /** The `Authorization` header (`Bearer <token>`), or ''. */
  authorization: string;
  /** The `x-api-key` header (an Anthropic client's key; the gateway takes it), or ''. */
  apiKey: string;
  /** The `Content-Type` header, or ''. */
  contentType: string;
  /** The `Accept` header, or '' (`/mcp` streams only to a client that accepts `text/event-stream`). */
  accept: string;
  sessionId: string;
  /** `Mcp-Peer-Id` on initialize: the peer id this client had before a takeover. */
  peerHint: string;
  /** `Mcp-Spawn-Depth` on initialize: a bridge's client's delegation depth. */
  spawnDepth: string;
  /** `Mcp-Client-Pids` on initialize: the process chain of a bridge's client. */
  clientPids: string;
  /** `Last-Event-ID` on `GET /mcp`: the event after which a client resumes a stream, or ''. */
  lastEventId: string;
  /** `X-Majordomus-Task`: the task a gateway request counts its usage against, or ''. */
  task: string;
  body: Uint8Array;
  /** Aborts when the client goes away before its reply ended (a route waiting on another server stops). */
  signal: AbortSignal;
}

/** A reply whose body is known whole (written with its Content-Length). */
export interface HttpReply {
  status: number;
  contentType?: string;
  headers?: ReadonlyArray<readonly [string, string]>;
  body: string | Uint8Array;
}

/** Where a streamed reply writes its body. */
export interface ReplySink {
  /**
   * Writes one piece at once (one whole SSE event, or bytes passed through as they came);
   * dropped once the reply ended or the client left. Answers false when the client is not keeping
   * up: the piece is kept and sent, but a writer that can wait should wait for `onWritable`.
   */
  write(piece: string | Uint8Array): boolean;
  /** Ends the reply, after `last` when given (one write for both). Safe to call twice. */
  end(last?: string | Uint8Array): void;
  /** Breaks the reply off (closes the connection): the client sees it cut short, never complete. */
  cut(): void;
  /** Calls `listener` once, when the pieces held back after a `false` from `write` have left. */
  onWritable(listener: () => void): void;
  /** Aborts when the client goes away before the reply ended. */
  readonly signal: AbortSignal;
}

/**
 * A reply written in pieces as they become ready (a `text/event-stream`): the server library
 * writes the head, then calls `start`, which writes through the sink until it ends it. A route
 * whose head depends on another server (the gateway's upstream) answers its promise once that
 * head is known.
 */
export interface StreamedReply {
  status: number;
  contentType: string;
  headers?: ReadonlyArray<readonly [string, string]>;
  start(sink: ReplySink): void;
}

export type RouteReply = HttpReply | StreamedReply;

export function isStreamed(reply: RouteReply): reply is StreamedReply {
  return 'start' in reply;
}

export function jsonReply(status: number, value: unknown, headers?: HttpReply['headers']): HttpReply {
  return { status, contentType: 'application/json', body: JSON.stringify(value), ...(headers ? { headers } : {}) };
}

export function errorReply(code: WireErrorCode, message: string): HttpReply {
  return jsonReply(WIRE_ERRORS[code].status, wireErrorBody(code, message));
}

export function emptyReply(status: number, headers?: HttpReply['headers']): HttpReply {
  return { status, body: '', ...(headers ? { headers } : {}) };
}
