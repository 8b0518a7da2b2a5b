/**
 * Writing a reply with uWebSockets.js: a whole one under one cork, or a stream whose pieces are
 * written as they come (SSE) until the route ends it or the client goes away. Part of the uWS
 * adapter (src/http/uws-server.ts); nothing outside the adapter knows uWS.
 */
import type uWS from '@based/uws';
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { HttpReply, ReplySink, RouteReply, StreamedReply } from '../platform/http-exchange.js';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

function writeHead(res: uWS.HttpResponse, reply: RouteReply): void {
  res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
  res.writeHeader('Cache-Control', 'no-store');
  if (reply.contentType) res.writeHeader('Content-Type', reply.contentType);
  for (const [name, value] of reply.headers ?? []) res.writeHeader(name, value);
}

/** Writes a whole reply (call it under cork); `head` answers a HEAD request: the head alone. */
export function writeReply(res: uWS.HttpResponse, reply: HttpReply, head: boolean, closeConnection: boolean): void {
  writeHead(res, reply);
  // `endWithoutBody` is called without arguments: with a reported length uWS keeps the connection
  // waiting for a body that never comes (the next request on it gets EOF), and an explicit
  // `undefined` is taken as a length.
  if (reply.status === 204) {
    res.endWithoutBody(); // RFC 9110: a 204 carries no Content-Length.
  } else if (head) {
    res.writeHeader('Content-Length', String(typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength));
    res.endWithoutBody();
  } else {
    res.end(reply.body, closeConnection);
  }
}

/**
 * Writes a streamed reply: the head now, then each piece the route writes (chunked, since no
 * length is known), until the route ends or cuts it. Answers what to call when the client goes
 * away: from then on the response is never touched (uWS forbids it) and the route's signal aborts.
 *
 * Backpressure: uWS keeps every piece written, and `write` answers false once some are held back.
 * While an `onWritable` handler is registered uWS leaves draining to it, so the handler drains
 * (an empty cork flushes what is held) before telling the route it may write again.
 */
export function streamReply(res: uWS.HttpResponse, reply: StreamedReply, head: boolean, gone: AbortSignal): () => void {
  let ended = false;
  if (head) {
    // HEAD: the head alone, and nothing is started.
    res.cork(() => {
      writeHead(res, reply);
      res.endWithoutBody();
    });
    return () => undefined;
  }
  let writable: (() => void) | null = null;
  let watching = false;
  /** While the route starts, inside the head's cork: a cut waits until the cork has ended. */
  let starting = true;
  let cutWhileStarting = false;
  const sink: ReplySink = {
    write(piece) {
      if (ended) return true;
      let ok = true;
      res.cork(() => {
        ok = res.write(piece);
      });
      return ok;
    },
    end(last) {
      if (ended) return;
      ended = true;
      res.cork(() => {
        if (last !== undefined && last.length > 0) res.write(last);
        res.end();
      });
    },
    cut() {
      if (ended) return;
      ended = true;
      if (starting) cutWhileStarting = true;
      else res.close(); // runs onAborted: the signal aborts
    },
    onWritable(listener) {
      if (ended) return;
      writable = listener;
      if (watching) return;
      watching = true;
      res.onWritable(() => {
        if (ended) return true;
        res.cork(() => undefined);
        const resume = writable;
        writable = null;
        resume?.();
        return true;
      });
    },
    signal: gone,
  };
  // The head and whatever the route writes as it starts (a relayed stream's first chunk) leave
  // together: one write to the client, which is its time to first byte.
  res.cork(() => {
    writeHead(res, reply);
    try {
      reply.start(sink);
    } catch (error) {
      // A route that fails to start its stream ends it: the client sees it end, never a hang.
      log.error(`a stream failed to start: ${errorMessage(error)}`);
      sink.end();
    }
  });
  starting = false;
  if (cutWhileStarting) res.close();
  return () => {
    ended = true;
  };
}
