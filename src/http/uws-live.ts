/**
 * The WebSocket route of the uWS adapter (the live page's feed): the upgrade request passes the
 * same Host/Origin guard as every request (a page elsewhere cannot open it); frames over the bound
 * close the socket; each text frame is decoded (invalid UTF-8 reads as malformed) and handed to
 * the feed, which knows nothing of uWS. The node:http engine's counterpart is src/http/node-live.ts.
 */
import uWS from '@based/uws';
import type { LiveConnection, LiveSocket } from '../page/feed.js';
import { LIVE_IDLE_SECONDS, type LiveRoute } from './server-contract.js';
import { writeReply } from './uws-reply.js';

/** What uWS keeps with each page socket: the feed's handlers once it opened. */
export interface LiveData {
  connection: LiveConnection | null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export function liveBehavior(live: LiveRoute): uWS.WebSocketBehavior<LiveData> {
  return {
    maxPayloadLength: live.maxFrameBytes,
    idleTimeout: LIVE_IDLE_SECONDS,
    sendPingsAutomatically: true,
    maxBackpressure: 4 * 1024 * 1024,
    compression: uWS.DISABLED,
    upgrade: (res, req, context) => {
      const refusal = live.refusal(req.getHeader('host'), req.getHeader('origin'));
      if (refusal) {
        res.cork(() => writeReply(res, refusal, false, true));
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
