/**
 * Reading a request with uWebSockets.js: the headers into a plain `HttpRequest`, then a bounded
 * body (an oversized one drained, then refused with 413), handed to the router; its reply written
 * back once, unless the client went away first (`onAborted`: nothing touches the response after
 * that). Part of the uWS adapter (src/http/uws-server.ts); the limits are every engine's
 * (src/http/server-contract.ts).
 */
import type uWS from '@based/uws';
import { errorMessage } from '../platform/errors.js';
import { errorReply, isStreamed, type RouteReply } from '../platform/http-exchange.js';
import { bodyBoundFor, bodyPlan, ClientGone, routeRequest, tooLargeReply, type RequestHandler } from './server-contract.js';
import { streamReply, writeReply } from './uws-reply.js';

export function serveRequest(res: uWS.HttpResponse, req: uWS.HttpRequest, handle: RequestHandler): void {
  const method = req.getCaseSensitiveMethod().toUpperCase();
  const head = method === 'HEAD';
  // Aborted when the client goes away before its reply ended: a route waiting on another server
  // (the gateway) stops waiting, a stream stops writing.
  const gone = new ClientGone();
  const request = routeRequest(method, req.getUrl(), req.getQuery() ?? '', (name) => req.getHeader(name), gone);
  const bound = bodyBoundFor(request.path);
  const plan = bodyPlan(method, req.getHeader('content-length'), bound);
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
  res.onData((chunk, isLast) => {
    if (answered) return;
    size += chunk.byteLength;
    tooLarge ||= size > bound.max;
    if (tooLarge) {
      // The rest is read and dropped, so the client reads the 413 instead of a reset connection;
      // a body past the drain limit is cut off with the answer.
      const cutOff = !isLast && size > bound.drain;
      if (isLast || cutOff) respond(tooLargeReply(bound), cutOff);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      request.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      dispatch();
    }
  });
}
