/**
 * The WebSocket route of the node:http engine (the live page's feed), over the `ws` package: the
 * upgrade request passes the same Host/Origin guard as every request (a page elsewhere cannot
 * open it); frames over the bound close the socket (1009); each text frame is decoded (invalid
 * UTF-8 reads as malformed) and handed to the feed, which knows nothing of either engine. What
 * uWS does by itself is done here: a silent socket is pinged, and closed when it stays silent.
 * The uWS engine's counterpart is src/http/uws-live.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { LiveSocket } from '../page/feed.js';
import { errorReply } from '../platform/http-exchange.js';
import { headerOf, splitTarget } from './node-request.js';
import { writeRawReply } from './node-reply.js';
import { LIVE_IDLE_SECONDS, type LiveRoute } from './server-contract.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

function text(data: RawData): string {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  try {
    return decoder.decode(bytes);
  } catch {
    return ''; // not UTF-8: read as malformed JSON
  }
}

export class NodeLive {
  readonly #live: LiveRoute;
  readonly #sockets: WebSocketServer;
  /** Sockets that sent something (a frame, a pong) since the last round of pings. */
  readonly #heard = new WeakSet<WebSocket>();
  readonly #pings: NodeJS.Timeout;

  constructor(live: LiveRoute) {
    this.#live = live;
    this.#sockets = new WebSocketServer({
      noServer: true,
      maxPayload: live.maxFrameBytes,
      perMessageDeflate: false,
      // Decoded here, as uWS hands the frame over: invalid UTF-8 is the feed's invalid_json.
      skipUTF8Validation: true,
    });
    // Half the idle bound apart: a socket silent for a whole round (no frame, no pong) is dropped.
    this.#pings = setInterval(() => this.#pingRound(), (LIVE_IDLE_SECONDS * 1000) / 2);
    this.#pings.unref();
  }

  /** An upgrade request (node:http hands over every one): the WebSocket opens, or a reply refuses it. */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    // Until ws takes the socket, a reset must not become an uncaught error.
    socket.on('error', () => undefined);
    const [path] = splitTarget(req.url ?? '/');
    if (path !== this.#live.path || headerOf(req, 'upgrade').toLowerCase() !== 'websocket') {
      writeRawReply(socket, errorReply('not_found', `no WebSocket at ${path}: only ${this.#live.path} upgrades to one; send this request without Upgrade`));
      return;
    }
    const refusal = this.#live.refusal(headerOf(req, 'host'), headerOf(req, 'origin'));
    if (refusal) {
      writeRawReply(socket, refusal);
      return;
    }
    this.#sockets.handleUpgrade(req, socket, head, (ws) => this.#open(ws, socket));
  }

  /** Closes every page socket at once (the server is stopping). Safe to call twice. */
  close(): void {
    clearInterval(this.#pings);
    for (const ws of this.#sockets.clients) ws.terminate();
    this.#sockets.close();
  }

  #open(ws: WebSocket, socket: Socket): void {
    let open = true;
    const page: LiveSocket = {
      send: (frame) => {
        if (!open) return true;
        ws.send(frame);
        return !socket.writableNeedDrain;
      },
      bufferedAmount: () => (open ? ws.bufferedAmount : 0),
      end: (code, reason) => {
        if (!open) return;
        open = false;
        ws.close(code, reason);
      },
    };
    const connection = this.#live.open(page);
    this.#heard.add(ws);
    ws.on('message', (data, isBinary) => {
      this.#heard.add(ws);
      connection.message(isBinary ? null : text(data));
    });
    ws.on('pong', () => this.#heard.add(ws));
    socket.on('drain', () => connection.drained());
    // A protocol error (an oversized frame: 1009) closes the socket; 'close' follows.
    ws.on('error', () => undefined);
    ws.on('close', () => {
      open = false;
      connection.closed();
    });
  }

  #pingRound(): void {
    for (const ws of this.#sockets.clients) {
      if (!this.#heard.has(ws)) {
        ws.terminate();
        continue;
      }
      this.#heard.delete(ws);
      ws.ping();
    }
  }
}
