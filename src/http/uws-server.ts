/**
 * The uWebSockets.js adapter: reads a request (headers, then a bounded body), hands it to the
 * router as a plain `HttpRequest`, and writes the reply back — whole, or as a stream whose pieces
 * are written as they come (SSE), each under cork, until the route ends it or the client goes
 * away (`onAborted`: nothing touches the response after that). Nothing else here knows uWS.
 * It runs in the HTTP thread only; the app must be closed before that thread ends (a uWS app left
 * open in an ending thread aborts the process).
 */
import uWS from '@based/uws';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { errorReply, isStreamed, type HttpReply, type ReplySink, type RouteReply, type StreamedReply } from './reply.js';
import { MAX_BODY_BYTES, type HttpRequest } from './router.js';
import type { LiveConnection, LiveSocket } from '../page/feed.js';

/** An oversized body is drained up to this much before the connection is cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

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

export interface UwsServerOptions {
  host: string;
  port: number;
  /** Try a free port when `port` is taken. */
  fallbackToFreePort: boolean;
  handle(request: HttpRequest): Promise<RouteReply>;
  /** A WebSocket route (the live page's feed), when the server has one. */
  live?: LiveRoute;
}

/** A WebSocket route: who may open it (checked on the upgrade request), and what serves each socket. */
export interface LiveRoute {
  path: string;
  /** Frames larger than this close the socket (1009). */
  maxFrameBytes: number;
  /** Null to accept the upgrade, else the reply that refuses it (Host/Origin, capacity). */
  refusal(host: string, origin: string): HttpReply | null;
  open(socket: LiveSocket): LiveConnection;
}

export type UwsStart = { ok: true; server: UwsServer } | { ok: false; reason: string };

/** The two app calls used here: the typings (v20.51.0) lack listen with both a host and options, which the addon takes. */
interface UwsApp {
  close(): void;
  listen(host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void): UwsApp;
}

// uWS shares a port with other processes (SO_REUSEPORT) unless told otherwise.
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;
const EMPTY = new Uint8Array(0);

function writeHead(res: uWS.HttpResponse, reply: RouteReply): void {
  res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
  res.writeHeader('Cache-Control', 'no-store');
  if (reply.contentType) res.writeHeader('Content-Type', reply.contentType);
  for (const [name, value] of reply.headers ?? []) res.writeHeader(name, value);
}

function write(res: uWS.HttpResponse, reply: HttpReply, head: boolean, closeConnection: boolean): void {
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

export class UwsServer {
  readonly #app: UwsApp;
  #listenSocket: uWS.us_listen_socket | null = null;
  #port = 0;
  #requestedPort = 0;

  private constructor(handle: UwsServerOptions['handle'], live: LiveRoute | undefined) {
    const app = uWS.App();
    if (live) app.ws<LiveData>(live.path, liveBehavior(live));
    this.#app = app.any('/*', (res, req) => serve(res, req, handle)) as unknown as UwsApp;
  }

  /** Binds (falling back to a free port when asked); the reason when nothing could be bound. */
  static async start(options: UwsServerOptions): Promise<UwsStart> {
    const server = new UwsServer(options.handle, options.live);
    let port = await server.#listen(options.host, options.port);
    if (port === null && options.fallbackToFreePort && options.port !== 0) port = await server.#listen(options.host, 0);
    if (port === null) {
      server.close();
      return { ok: false, reason: `cannot listen on ${options.host}:${options.port}` };
    }
    server.#port = port;
    server.#requestedPort = options.port;
    return { ok: true, server };
  }

  get port(): number {
    return this.#port;
  }

  get requestedPort(): number {
    return this.#requestedPort;
  }

  /** Stops listening and closes every connection. Safe to call twice. */
  close(): void {
    if (this.#listenSocket) uWS.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = null;
    this.#app.close();
  }

  #listen(host: string, port: number): Promise<number | null> {
    return new Promise((resolve) => {
      this.#app.listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) return resolve(null);
        this.#listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      });
    });
  }
}

function serve(res: uWS.HttpResponse, req: uWS.HttpRequest, handle: UwsServerOptions['handle']): void {
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
      onGone = stream(res, reply, head, gone.signal);
      return;
    }
    res.cork(() => write(res, reply, head, closeConnection));
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

/**
 * Writes a streamed reply: the head now, then each piece the route writes (chunked, since no
 * length is known), until the route ends or cuts it. Answers what to call when the client goes
 * away: from then on the response is never touched (uWS forbids it) and the route's signal aborts.
 *
 * Backpressure: uWS keeps every piece written, and `write` answers false once some are held back.
 * While an `onWritable` handler is registered uWS leaves draining to it, so the handler drains
 * (an empty cork flushes what is held) before telling the route it may write again.
 */
function stream(res: uWS.HttpResponse, reply: StreamedReply, head: boolean, gone: AbortSignal): () => void {
  let ended = false;
  res.cork(() => {
    writeHead(res, reply);
    if (head) res.endWithoutBody(); // HEAD: the head alone, and nothing is started
  });
  if (head) return () => undefined;
  let writable: (() => void) | null = null;
  let watching = false;
  const sink: ReplySink = {
    write(piece) {
      if (ended) return true;
      let ok = true;
      res.cork(() => {
        ok = res.write(piece);
      });
      return ok;
    },
    end() {
      if (ended) return;
      ended = true;
      res.cork(() => res.end());
    },
    cut() {
      if (ended) return;
      ended = true;
      res.close(); // runs onAborted: the signal aborts
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

/** What uWS keeps with each page socket: the feed's handlers once it opened. */
interface LiveData {
  connection: LiveConnection | null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The WebSocket route: the upgrade request passes the same Host/Origin guard as every request
 * (a page elsewhere cannot open it); frames over the bound close the socket; each text frame is
 * decoded (invalid UTF-8 reads as malformed) and handed to the feed.
 */
function liveBehavior(live: LiveRoute): uWS.WebSocketBehavior<LiveData> {
  return {
    maxPayloadLength: live.maxFrameBytes,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    maxBackpressure: 4 * 1024 * 1024,
    compression: uWS.DISABLED,
    upgrade: (res, req, context) => {
      const refusal = live.refusal(req.getHeader('host'), req.getHeader('origin'));
      if (refusal) {
        res.cork(() => write(res, refusal, false, true));
        return;
      }
      res.upgrade<LiveData>(
        { connection: null },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      let open = true;
      const socket: LiveSocket = {
        send: (text) => (open ? ws.send(text, false, false) === 1 : true),
        bufferedAmount: () => (open ? ws.getBufferedAmount() : 0),
        end: (code, reason) => {
          if (!open) return;
          open = false;
          ws.end(code, reason);
        },
      };
      const data = ws.getUserData();
      data.connection = live.open(socket);
      const closed = data.connection.closed;
      data.connection.closed = () => {
        open = false;
        closed();
      };
    },
    message: (ws, message, isBinary) => {
      const connection = ws.getUserData().connection;
      if (!connection) return;
      let text: string | null = null;
      if (!isBinary) {
        try {
          text = decoder.decode(message);
        } catch {
          text = ''; // not UTF-8: read as malformed JSON
        }
      }
      connection.message(text);
    },
    drain: (ws) => ws.getUserData().connection?.drained(),
    close: (ws) => ws.getUserData().connection?.closed(),
  };
}
