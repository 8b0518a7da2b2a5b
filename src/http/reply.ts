/** What a route answers, before any server library writes it: a whole body, or a stream. */
import { wireErrorBody, type WireErrorCode, WIRE_ERRORS } from '../errors.js';

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
  /** Ends the reply. Safe to call twice. */
  end(): void;
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
