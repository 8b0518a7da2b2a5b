/**
 * Writing a reply with node:http: a whole one with its Content-Length in one write, or a stream
 * whose pieces are written as they come (SSE, chunked) until the route ends it or the client goes
 * away. Part of the node:http engine (src/http/node-server.ts); the uWS engine's counterpart is
 * src/http/uws-reply.ts, and both write the same heads.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { HttpReply, ReplySink, RouteReply, StreamedReply } from '../platform/http-exchange.js';

function bodyLength(reply: HttpReply): number {
  return typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength;
}

/** The head's fields as node:http takes them (name, value, name, value…: a name may repeat). */
function headFields(reply: RouteReply, extra: ReadonlyArray<readonly [string, string]>): string[] {
  const fields = ['Cache-Control', 'no-store'];
  if (reply.contentType) fields.push('Content-Type', reply.contentType);
  for (const [name, value] of [...(reply.headers ?? []), ...extra]) fields.push(name, value);
  return fields;
}

/** Writes a whole reply; `head` answers a HEAD request (the head alone, with the body's length). */
export function writeReply(res: ServerResponse, reply: HttpReply, head: boolean, closeConnection: boolean): void {
  const extra: Array<readonly [string, string]> = [];
  // RFC 9110: a 204 carries no Content-Length.
  if (reply.status !== 204) extra.push(['Content-Length', String(bodyLength(reply))]);
  // node:http closes the connection once this reply is written.
  if (closeConnection) extra.push(['Connection', 'close']);
  res.writeHead(reply.status, headFields(reply, extra));
  if (head || reply.status === 204) res.end();
  else res.end(reply.body);
}

/**
 * Writes a streamed reply: the head now (flushed, so the client sees it before the first piece),
 * then each piece the route writes, until the route ends or cuts it. Answers what to call when the
 * client goes away: from then on nothing is written and the route's signal aborts.
 *
 * Backpressure: `write` answers false once node:http holds pieces back; `onWritable` waits for
 * the response's `drain` (or answers at once when nothing is held back).
 */
export function streamReply(res: ServerResponse, reply: StreamedReply, head: boolean, gone: AbortSignal): () => void {
  let ended = false;
  res.writeHead(reply.status, headFields(reply, []));
  if (head) {
    res.end(); // HEAD: the head alone, and nothing is started
    return () => undefined;
  }
  res.flushHeaders();
  const sink: ReplySink = {
    write(piece) {
      if (ended) return true;
      return res.write(piece);
    },
    end(last) {
      if (ended) return;
      ended = true;
      if (last !== undefined && last.length > 0) res.end(last);
      else res.end();
    },
    cut() {
      if (ended) return;
      ended = true;
      res.destroy(); // the client sees the chunked body end without its last chunk; the signal aborts
    },
    onWritable(listener) {
      if (ended) return;
      if (!res.writableNeedDrain) {
        setImmediate(() => {
          if (!ended) listener();
        });
        return;
      }
      res.once('drain', () => {
        if (!ended) listener();
      });
    },
    signal: gone,
  };
  try {
    reply.start(sink);
  } catch (error) {
    // A route that fails to start its stream ends it: the client sees it end, never a hang.
    log.error(`a stream failed to start: ${errorMessage(error)}`);
    sink.end();
  }
  return () => {
    ended = true;
  };
}

/**
 * A whole reply written straight onto a socket, then the socket ended: for an upgrade request
 * refused before the WebSocket opens (node:http has handed the socket over by then).
 */
export function writeRawReply(socket: Socket, reply: HttpReply): void {
  const body = Buffer.from(reply.body);
  const fields = headFields(reply, [
    ['Content-Length', String(body.byteLength)],
    ['Connection', 'close'],
  ]);
  let head = `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}\r\n`;
  for (let i = 0; i < fields.length; i += 2) head += `${fields[i]}: ${fields[i + 1]}\r\n`;
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]));
}
