/**
 * `/mcp`: MCP's Streamable HTTP transport. One JSON-RPC message per POST; `initialize` opens a
 * session and issues `Mcp-Session-Id`; DELETE ends it; a session idle for longer than the expiry
 * ends with its peer. The number of open sessions is capped: every session is a peer the others
 * read about.
 *
 * A POST is answered with JSON — the fast path — unless the client accepts `text/event-stream`
 * and the request asked for progress (`_meta.progressToken`), or belongs to a session on MCP
 * 2025-11-25 or later (initialize aside): that one is answered as an SSE stream carrying its
 * notifications as they come and its response last. `GET` opens the session's own stream, where
 * the server sends what belongs to no request; a second GET replaces the first.
 *
 * A session on 2025-11-25 or later has resumable streams (src/http/resumable-streams.ts): a client
 * whose connection broke resumes with `GET` and `Last-Event-ID`, and its request goes on for the
 * window meanwhile. An older client cannot resume: leaving its stream cancels its request.
 */
import { randomUUID } from 'node:crypto';
import { parsePids } from '../platform/proc.js';
import { errorMessage } from '../platform/errors.js';
import { decodeUtf8, JsonInputError, parseJsonInput } from '../platform/json-input.js';
import { frameText } from '../mcp/frame.js';
import type { LogSource } from '../mcp/logging.js';
import { errorResponse, isJsonRpcId, RPC, type JsonRpcId, type JsonRpcResponse } from '../platform/jsonrpc.js';
import { McpSession, progressTokenOf, unreadableFrameResponse, type McpBackend } from '../mcp/session.js';
import { emptyReply, errorReply, jsonReply, type HttpReply, type ReplySink, type RouteReply, type StreamedReply } from '../platform/http-exchange.js';
import { RESUME_WINDOW_MS, resumableProtocol, SessionStreams } from './resumable-streams.js';
import { sseComment, sseEvent } from './sse.js';

/** What a client told the session cap is full waits before it tries again (seconds). */
export const BUSY_RETRY_AFTER_SECONDS = 5;

export const SESSION_HEADER = 'Mcp-Session-Id';
/** Names the caller's peer id on initialize; a bridge sends it back to keep its identity. */
export const PEER_HEADER = 'Mcp-Peer-Id';
/** On initialize from a bridge: the delegation depth of its client (`MAJORDOMUS_SPAWN_DEPTH`). */
export const SPAWN_DEPTH_HEADER = 'Mcp-Spawn-Depth';
/** A bridge's client's process chain (`123,456`, the agent first): how the git guard tells peers apart. */
export const CLIENT_PIDS_HEADER = 'Mcp-Client-Pids';
const MAX_CLIENT_PIDS = 16;

/**
 * The depth of a client over HTTP: its header's value, else 0 — a client nobody spawned (a bridge
 * always says, an HTTP client of its own is top-level), never the owner's depth.
 */
function spawnDepthOf(header: string): number {
  return /^\d{1,3}$/.test(header) ? Number(header) : 0;
}

/** How often an open session stream carries a comment, so nothing on the way thinks it dead. */
export const KEEP_ALIVE_MS = 15_000;

interface OpenSession {
  session: McpSession;
  lastSeen: number;
  /** Requests being answered: a session with one under way (a long follow) is not idle. */
  active: number;
  /** The session's own stream (GET), while one is open: ends it. */
  stream: { stop(): void } | null;
  /** Its resumable streams, once it agreed on a protocol version that has them. */
  streams: SessionStreams | null;
}

export interface McpEndpointOptions {
  backend: McpBackend;
  idleMs: number;
  /** How many sessions may be open at once; past it `initialize` is answered 503 busy. */
  maxSessions: number;
  /** Whether new sessions may open (false once the lease is lost). */
  acceptsSessions: () => boolean;
  /** Called on every request of a session: the peer is alive. */
  touch?: (peerId: string) => void;
  now?: () => number;
  /** How often the session stream carries a keep-alive comment (ms); `KEEP_ALIVE_MS` by default. */
  keepAliveMs?: number;
  /** The server's log lines, which each session's client hears at or above its level. */
  logs?: LogSource;
}

/** A JSON-RPC answer as the body of a 200, written like every other transport writes it. */
function frameReply(answer: JsonRpcResponse, headers?: HttpReply['headers']): HttpReply {
  return { status: 200, contentType: 'application/json', body: frameText(answer), ...(headers ? { headers } : {}) };
}

function isInitialize(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'initialize';
}

/** A request other than initialize (whose answer must carry the session id in its head). */
function isStreamableRequest(message: unknown): message is { id: JsonRpcId; method: string; params: unknown } {
  if (typeof message !== 'object' || message === null) return false;
  const { id, method } = message as { id?: unknown; method?: unknown };
  return isJsonRpcId(id) && typeof method === 'string' && method !== 'initialize';
}

/** A request (not initialize) whose client asked for progress: it is worth a stream. */
function wantsProgress(message: unknown): message is { id: JsonRpcId; method: string; params: unknown } {
  if (typeof message !== 'object' || message === null) return false;
  const { id, method, params } = message as { id?: unknown; method?: unknown; params?: unknown };
  return isJsonRpcId(id) && typeof method === 'string' && method !== 'initialize' && progressTokenOf(params) !== undefined;
}

const sseReply = (start: StreamedReply['start']): StreamedReply => ({ status: 200, contentType: 'text/event-stream', start });

export class McpEndpoint {
  readonly #sessions = new Map<string, OpenSession>();
  readonly #options: McpEndpointOptions;
  readonly #now: () => number;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The peer id of a live session, `undefined` for an unknown one. */
  peerOf(sessionId: string): string | null | undefined {
    const open = this.#sessions.get(sessionId);
    if (!open) return undefined;
    open.lastSeen = this.#now();
    return open.session.peerId;
  }

  /** `eventStream`: the client accepts `text/event-stream` (its `Accept` lists it). */
  async post(body: Uint8Array, sessionId: string, peerHint = '', eventStream = false, spawnDepth = '', clientPids = ''): Promise<RouteReply> {
    let message: unknown;
    try {
      message = parseJsonInput(decodeUtf8(body));
    } catch (error) {
      if (error instanceof JsonInputError) return jsonReply(400, unreadableFrameResponse(error));
      throw error;
    }
    let open: OpenSession | undefined;
    let issued: string | undefined;
    if (sessionId === '') {
      if (!isInitialize(message)) {
        return errorReply('session_required', 'send initialize first, then every request with its Mcp-Session-Id header');
      }
      if (!this.#options.acceptsSessions()) {
        return errorReply('lease_lost', 'this server no longer holds the lease of the checkout; attach to the current one');
      }
      if (this.#sessions.size >= this.#options.maxSessions) {
        return {
          ...errorReply('busy', `${this.#sessions.size} MCP sessions are open, the most this server keeps; retry in ${BUSY_RETRY_AFTER_SECONDS} s or end an idle one`),
          headers: [['Retry-After', String(BUSY_RETRY_AFTER_SECONDS)]],
        };
      }
      issued = randomUUID();
      const session = new McpSession(this.#options.backend, {
        ...(peerHint === '' ? {} : { preferredPeerId: peerHint }),
        spawnDepth: spawnDepthOf(spawnDepth),
        clientPids: parsePids(clientPids, MAX_CLIENT_PIDS),
        ...(this.#options.logs ? { logs: this.#options.logs } : {}),
      });
      open = { session, lastSeen: this.#now(), active: 0, stream: null, streams: null };
    } else {
      open = this.#sessions.get(sessionId);
      if (!open) return errorReply('session_not_found', `no session ${sessionId}: it ended or expired`);
      open.lastSeen = this.#now();
      if (open.session.peerId !== null) this.#options.touch?.(open.session.peerId);
      if (eventStream && this.#answersAsStream(open, message)) return this.#answerAsStream(open, message);
    }
    const answer = await this.#answer(open, () => open.session.handle(message));
    if (issued !== undefined) {
      // Only a session whose initialize succeeded is kept.
      if (answer?.error !== undefined) {
        open.session.close(); // a peer that joined before the failure leaves again
        return frameReply(answer);
      }
      this.#sessions.set(issued, open);
    }
    const headers =
      issued !== undefined
        ? ([
            [SESSION_HEADER, issued],
            [PEER_HEADER, open.session.peerId ?? ''],
          ] as const)
        : undefined;
    if (answer === undefined) return emptyReply(202, headers);
    return frameReply(answer, headers);
  }

  /**
   * Sends a notification tied to no request to the sessions of a peer, on their streams (GET);
   * answers whether any stream took it.
   */
  notifyPeer(peerId: string, method: string, params?: Record<string, unknown>, requires: string | null = null): boolean {
    let sent = false;
    for (const open of this.#sessions.values()) {
      if (open.session.peerId === peerId && open.session.notify(method, params, requires)) sent = true;
    }
    return sent;
  }

  /**
   * `GET /mcp`: the session's own stream (SSE), where the server sends what belongs to no request.
   * It stays open until the client leaves, a later GET replaces it, or the session ends. With
   * `Last-Event-ID` (a resumable session) it resumes the stream that event was on instead.
   */
  openStream(sessionId: string, eventStream: boolean, lastEventId = ''): RouteReply {
    if (!eventStream) {
      return errorReply('not_acceptable', 'GET /mcp opens the session\'s event stream and nothing else: send Accept: text/event-stream');
    }
    if (sessionId === '') return errorReply('session_required', 'GET /mcp needs the Mcp-Session-Id header of the session whose stream it opens');
    const open = this.#sessions.get(sessionId);
    if (!open) return errorReply('session_not_found', `no session ${sessionId}: it ended or expired`);
    open.lastSeen = this.#now();
    const streams = this.#streamsOf(open);
    let after: number | null = null;
    if (streams !== null && lastEventId !== '') {
      const found = streams.find(lastEventId);
      if (found === null) {
        return errorReply('stream_not_found', `this session keeps no stream with the event ${JSON.stringify(lastEventId.slice(0, 64))}: it is not one of its ids, or its stream ended over ${RESUME_WINDOW_MS / 1000} s ago`);
      }
      if (found.stream !== streams.session) return sseReply((sink) => found.stream.connect(sink, found.after));
      after = found.after;
    }
    return sseReply((sink) => {
      // The session may have ended between the answer and its head being written.
      if (this.#sessions.get(sessionId) !== open) return sink.end();
      this.#attachStream(open, sink, after);
    });
  }

  delete(sessionId: string): HttpReply {
    if (sessionId === '') return errorReply('session_required', 'DELETE /mcp needs the Mcp-Session-Id header');
    const open = this.#sessions.get(sessionId);
    if (!open) return errorReply('session_not_found', `no session ${sessionId}: it ended or expired`);
    this.#sessions.delete(sessionId);
    this.#end(open);
    return emptyReply(204);
  }

  /**
   * Ends sessions idle for longer than the expiry; answers how many ended. A session with a request
   * under way (a follow of several minutes) is not idle. Its open stream does not count: a client
   * shows it is alive by its requests (a bridge pings), and an expired session's stream ends.
   */
  expireIdle(): number {
    const limit = this.#now() - this.#options.idleMs;
    let ended = 0;
    for (const [id, open] of this.#sessions) {
      if (open.lastSeen > limit || open.active > 0) continue;
      this.#sessions.delete(id);
      this.#end(open);
      ended += 1;
    }
    return ended;
  }

  /** A turn started or ended, a session went: every session hears what it subscribed to, and of its tasks. */
  harnessNews(news: { uris: readonly string[]; endedTasks: readonly string[] }): void {
    for (const open of this.#sessions.values()) {
      open.session.resourcesChanged(news.uris);
      open.session.tasksEnded(news.endedTasks);
    }
  }

  /** A new generation of the layer serves: every session hears what changed (see McpSession.layerChanged). */
  layerChanged(changed: readonly string[]): void {
    for (const open of this.#sessions.values()) open.session.layerChanged(changed);
  }

  closeAll(): void {
    for (const open of this.#sessions.values()) this.#end(open);
    this.#sessions.clear();
  }

  #end(open: OpenSession): void {
    open.stream?.stop();
    open.streams?.close();
    open.session.close();
  }

  /** The session's resumable streams, when its protocol version has them. */
  #streamsOf(open: OpenSession): SessionStreams | null {
    if (open.streams === null && resumableProtocol(open.session.protocolVersion)) open.streams = new SessionStreams();
    return open.streams;
  }

  /** Whether a request is answered as a stream: it asked for progress, or its session's streams are resumable. */
  #answersAsStream(open: OpenSession, message: unknown): message is { id: JsonRpcId; method: string; params: unknown } {
    if (wantsProgress(message)) return true;
    return isStreamableRequest(message) && this.#streamsOf(open) !== null;
  }

  /** Runs one message of the session, counting it as activity for as long as it runs. */
  async #answer<T>(open: OpenSession, run: () => Promise<T>): Promise<T> {
    open.active += 1;
    try {
      return await run();
    } finally {
      open.active -= 1;
      open.lastSeen = this.#now();
    }
  }

  /** A request answered as SSE: its notifications as they come, its response last, then the end. */
  #answerAsStream(open: OpenSession, message: { id: JsonRpcId }): StreamedReply {
    return sseReply((sink) => {
      const { id } = message;
      const out = this.#requestStream(open, id, sink);
      this.#answer(open, () => open.session.handle(message, (frame) => out.write(JSON.stringify(frame))))
        .then(
          (answer) => {
            if (answer !== undefined) out.write(frameText(answer));
          },
          (error: unknown) => out.write(JSON.stringify(errorResponse(id, RPC.internalError, `Internal error: ${errorMessage(error)}`))),
        )
        .finally(() => out.finish());
    });
  }

  /**
   * Where a streamed request's messages go. Resumable: a stream of its own, kept for replay; a
   * broken connection cancels the request only if no client reconnects within the window (MCP:
   * a disconnection is no cancellation). Otherwise the connection itself, and a client that
   * leaves it cancels the request: it could not resume it.
   */
  #requestStream(open: OpenSession, id: JsonRpcId, sink: ReplySink): { write(json: string): void; finish(): void } {
    const streams = this.#streamsOf(open);
    if (streams !== null) {
      const stream = streams.open(() => void open.session.cancel(id, 'the client did not reconnect to the stream of its request'));
      stream.connect(sink, null);
      return { write: (json) => stream.send(json), finish: () => streams.finish(stream) };
    }
    const onGone = (): void => void open.session.cancel(id, 'the client closed the stream');
    sink.signal.addEventListener('abort', onGone, { once: true });
    return {
      write: (json) => sink.write(sseEvent(json)),
      finish: () => {
        sink.signal.removeEventListener('abort', onGone);
        sink.end();
      },
    };
  }

  /** Attaches a GET connection as the session's stream; `after`: the event a resumed one goes on from. */
  #attachStream(open: OpenSession, sink: ReplySink, after: number | null): void {
    open.stream?.stop(); // one stream per session: the newer wins
    const streams = this.#streamsOf(open);
    const write = streams === null ? (json: string) => void sink.write(sseEvent(json)) : (json: string) => streams.session.send(json);
    const detach = open.session.attachStream((frame) => write(JSON.stringify(frame)));
    const keepAlive = setInterval(() => sink.write(sseComment('keep-alive')), this.#options.keepAliveMs ?? KEEP_ALIVE_MS);
    keepAlive.unref();
    const stream = {
      stop: (): void => {
        clearInterval(keepAlive);
        detach();
        sink.signal.removeEventListener('abort', stream.stop);
        if (open.stream === stream) open.stream = null;
        sink.end();
      },
    };
    sink.signal.addEventListener('abort', stream.stop, { once: true });
    open.stream = stream;
    sink.write(sseComment('the session stream is open')); // the head goes out now, not with the first event
    streams?.session.connect(sink, after);
  }
}
