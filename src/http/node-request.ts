/**
 * Reading a request with node:http: the headers into a plain `HttpRequest`, then a bounded body
 * (an oversized one drained, then refused with 413), handed to the router; its reply written back
 * once, unless the client went away first (the response closed before it ended: nothing is
 * written after that). Part of the node:http engine (src/http/node-server.ts); the uWS engine's
 * counterpart is src/http/uws-request.ts, and the limits are both engines' (src/http/server-contract.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { errorReply, isStreamed, type RouteReply } from '../platform/http-exchange.js';
import { bodyBoundFor, bodyPlan, ClientGone, routeRequest, tooLargeReply, type RequestHandler } from './server-contract.js';
import { streamReply, writeReply } from './node-reply.js';

/** One header's value as a route reads it: '' when absent, the first when repeated. */
export function headerOf(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** `/path?query` → [path, query] (the query without its `?`), as uWS's getUrl and getQuery give them. */
export function splitTarget(target: string): [string, string] {
  const at = target.indexOf('?');
  return at < 0 ? [target, ''] : [target.slice(0, at), target.slice(at + 1)];
}

export function serveRequest(req: IncomingMessage, res: ServerResponse, handle: RequestHandler): void {
  const method = (req.method ?? 'GET').toUpperCase();
  const head = method === 'HEAD';
  // Aborted when the client goes away before its reply ended: a route waiting on another server
  // (the gateway) stops waiting, a stream stops writing.
  const gone = new ClientGone();
  const [path, query] = splitTarget(req.url ?? '/');
  const request = routeRequest(method, path, query, (name) => headerOf(req, name), gone);
  const bound = bodyBoundFor(path);
  const plan = bodyPlan(method, headerOf(req, 'content-length'), bound);
  let answered = false;
  /** Set while a stream is being written: tells it the client has gone. */
  let onGone: (() => void) | null = null;
  res.once('close', () => {
    if (res.writableEnded) return;
    answered = true;
    onGone?.();
    gone.abort();
  });
  // A connection reset while the body arrives is seen as the response's close.
  req.on('error', () => undefined);
  const respond = (reply: RouteReply, closeConnection = false): void => {
    if (answered) return;
    answered = true;
    try {
      if (isStreamed(reply)) onGone = streamReply(res, reply, head, gone.signal);
      else writeReply(res, reply, head, closeConnection);
    } catch (error) {
      // node:http refuses a head it cannot write (a header value with a line break): the client
      // sees the connection close, and the thread goes on serving.
      log.error(`cannot write the answer to ${method} ${path}: ${errorMessage(error)}`);
      res.destroy();
    }
  };
  const dispatch = (): void => {
    handle(request).then(respond, (error: unknown) => respond(errorReply('internal', errorMessage(error))));
  };

  if (plan.kind === 'refuse') {
    // Not worth reading: answer now and close the connection.
    respond(tooLargeReply(bound), true);
    return;
  }
  if (plan.kind === 'none') {
    dispatch();
    return;
  }
  let tooLarge = plan.tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if (answered) return;
    size += chunk.byteLength;
    tooLarge ||= size > bound.max;
    if (!tooLarge) {
      chunks.push(chunk);
      return;
    }
    // The rest is read and dropped, so the client reads the 413 instead of a reset connection;
    // a body past the drain limit is cut off with the answer.
    if (size > bound.drain) {
      respond(tooLargeReply(bound), true);
      req.pause();
    }
  });
  req.on('end', () => {
    if (answered) return;
    if (tooLarge) {
      respond(tooLargeReply(bound));
      return;
    }
    request.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    dispatch();
  });
}
