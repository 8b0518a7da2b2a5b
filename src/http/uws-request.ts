/**
 * Reading a request with uWebSockets.js: the headers into a plain `HttpRequest`, then a bounded
 * body (an oversized one drained, then refused with 413), handed to the router; its reply written
 * back once, unless the client went away first (`onAborted`: nothing touches the response after
 * that). Part of the uWS adapter (src/http/uws-server.ts).
 */
import type uWS from '@trufflesuite/uws-js-unofficial';
import { errorMessage } from '../platform/errors.js';
import { errorReply, isStreamed, MAX_BODY_BYTES, type HttpReply, type HttpRequest, type RouteReply } from '../platform/http-exchange.js';
import { streamReply, writeReply } from './uws-reply.js';

/** An oversized body is drained up to this much before the connection is cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

const EMPTY = new Uint8Array(0);

/** What answers a request (the router). */
export type RequestHandler = (request: HttpRequest) => Promise<RouteReply>;

export function serveRequest(res: uWS.HttpResponse, req: uWS.HttpRequest, handle: RequestHandler): void {
  const method = req.getCaseSensitiveMethod().toUpperCase();
  const head = method === 'HEAD';
  // Aborted when the client goes away before its reply ended: a route waiting on another server
  // (the gateway) stops waiting, a stream stops writing.
  const gone = new AbortController();
  const request: HttpRequest = {
    method: head ? 'GET' : method,
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    host: req.getHeader('host'),
    origin: req.getHeader('origin'),
    authorization: req.getHeader('authorization'),
    contentType: req.getHeader('content-type'),
    accept: req.getHeader('accept'),
    sessionId: req.getHeader('mcp-session-id'),
    peerHint: req.getHeader('mcp-peer-id'),
    spawnDepth: req.getHeader('mcp-spawn-depth'),
    clientPids: req.getHeader('mcp-client-pids'),
    lastEventId: req.getHeader('last-event-id'),
    task: req.getHeader('x-majordomus-task'),
    body: EMPTY,
    signal: gone.signal,
  };
  const declared = req.getHeader('content-length');
  let answered = false;
  /** Set while a stream is being written: tells it the client has gone. */
  let onGone: (() => void) | null = null;
  res.onAborted(() => {
    answered = true;
    onGone?.();
    gone.abort();
  });
  const respond = (reply: RouteReply, closeConnection = false): void => {
    if (answered) return;
    answered = true;
    if (isStreamed(reply)) {
      onGone = streamReply(res, reply, head, gone.signal);
      return;
    }
    res.cork(() => writeReply(res, reply, head, closeConnection));
  };
  const dispatch = (): void => {
    handle(request).then(respond, (error: unknown) => respond(errorReply('internal', errorMessage(error))));
  };
  const tooLargeReply = (): HttpReply => errorReply('too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`);

  if (declared !== '' && Number(declared) > DRAIN_LIMIT_BYTES) {
    // Not worth reading: answer now and close the connection.
    respond(tooLargeReply(), true);
    return;
  }
  let tooLarge = declared !== '' && Number(declared) > MAX_BODY_BYTES;
  if (!tooLarge && (method === 'GET' || head || (method === 'DELETE' && declared === ''))) {
    dispatch();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (answered) return;
    size += chunk.byteLength;
    tooLarge ||= size > MAX_BODY_BYTES;
    if (tooLarge) {
      // The rest is read and dropped, so the client reads the 413 instead of a reset connection;
      // a body past the drain limit is cut off with the answer.
      const cutOff = !isLast && size > DRAIN_LIMIT_BYTES;
      if (isLast || cutOff) respond(tooLargeReply(), cutOff);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      request.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      dispatch();
    }
  });
}
