/**
 * The event streams of one `/mcp` session, made resumable as MCP 2025-11-25's Streamable HTTP
 * describes ("Resumability and Redelivery", SEP-1699). Stream 0 is the session's own (`GET
 * /mcp`); each request answered as a stream gets the next number. Every event carries the id
 * `<stream>-<n>` and stays replayable for a while, and a stream opens with a priming event (that
 * id, the `retry` a client waits before reconnecting, and no data). A client whose connection
 * broke sends `GET /mcp` with `Last-Event-ID`: the events after that one are written again on the
 * new connection, which then carries the rest of that stream — never another stream's.
 *
 * Only a session that agreed on 2025-11-25 or later gets these streams: older clients may choke on
 * a priming event's empty data (the SDK's server holds back for the same reason), and they get the
 * plain streams of src/http/sse.ts.
 */
import type { ReplySink } from '../platform/http-exchange.js';

/** How long a client waits before reconnecting a broken stream (the `retry` of the priming event). */
export const RETRY_MS = 1_000;
/**
 * How long the events of a stream that ended stay replayable, and how long a request whose
 * connection broke goes on without a client reconnecting to it before it is cancelled.
 */
export const RESUME_WINDOW_MS = 30_000;
/** A stream keeps at most this many events for replay… */
export const REPLAY_EVENTS = 64;
/** …and this many characters (its newest event is always kept, however large). */
export const REPLAY_CHARS = 512 * 1024;
/** How many ended request streams a session keeps replayable at once (the oldest goes first). */
export const ENDED_STREAMS_KEPT = 4;

/** The first protocol version whose clients read priming events (MCP 2025-11-25). */
export const RESUMABLE_SINCE = '2025-11-25';

/** Whether a session that agreed on `protocolVersion` gets resumable streams. */
export function resumableProtocol(protocolVersion: string | null): boolean {
  return protocolVersion !== null && protocolVersion >= RESUMABLE_SINCE;
}

interface KeptEvent {
  seq: number;
  frame: string;
}

/** One resumable stream: its events, kept for replay, and the connection it is written to, if any. */
export class ResumableStream {
  readonly id: number;
  #seq = 0;
  readonly #kept: KeptEvent[] = [];
  #keptChars = 0;
  #sink: ReplySink | null = null;
  #detachSink: (() => void) | null = null;
  #ended = false;
  #abandonTimer: NodeJS.Timeout | null = null;
  readonly #onAbandoned: (() => void) | undefined;

  /** `onAbandoned`: its connection broke and no client reconnected within the window (a request stream cancels its request). */
  constructor(id: number, onAbandoned?: () => void) {
    this.id = id;
    this.#onAbandoned = onAbandoned;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get connected(): boolean {
    return this.#sink !== null;
  }

  /** Writes one JSON-RPC message as an event with its id, and keeps it for replay. */
  send(json: string): void {
    this.#seq += 1;
    const frame = `id: ${this.id}-${this.#seq}\nevent: message\ndata: ${json}\n\n`;
    this.#keep({ seq: this.#seq, frame });
    this.#sink?.write(frame);
  }

  /**
   * Connects a client (a newer connection replaces an older one). A new connection (`after`
   * null) is primed; a resumed one gets the kept events after `after` again. A stream that has
   * ended ends the connection once those are written.
   */
  connect(sink: ReplySink, after: number | null): void {
    this.#disconnect();
    this.#cancelAbandon();
    if (after === null) {
      sink.write(`id: ${this.id}-${this.#seq}\nretry: ${RETRY_MS}\ndata: \n\n`);
    } else {
      for (const event of this.#kept) if (event.seq > after) sink.write(event.frame);
    }
    if (this.#ended) {
      sink.end();
      return;
    }
    const onGone = (): void => {
      if (this.#sink !== sink) return;
      this.#disconnect();
      this.#armAbandon();
    };
    sink.signal.addEventListener('abort', onGone, { once: true });
    this.#sink = sink;
    this.#detachSink = () => sink.signal.removeEventListener('abort', onGone);
  }

  /** Whether an event of this stream with sequence number `seq` can be resumed after. */
  canResumeAfter(seq: number): boolean {
    return Number.isSafeInteger(seq) && seq >= 0 && seq <= this.#seq;
  }

  /** The stream carried its last event: its connection ends; its events stay replayable. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#cancelAbandon();
    const sink = this.#sink;
    this.#disconnect();
    sink?.end();
  }

  /** Ends the connection and forgets the events (the session ended). */
  close(): void {
    this.#cancelAbandon();
    this.#ended = true;
    const sink = this.#sink;
    this.#disconnect();
    sink?.end();
    this.#kept.length = 0;
  }

  #keep(event: KeptEvent): void {
    this.#kept.push(event);
    this.#keptChars += event.frame.length;
    while (this.#kept.length > 1 && (this.#kept.length > REPLAY_EVENTS || this.#keptChars > REPLAY_CHARS)) {
      this.#keptChars -= (this.#kept.shift() as KeptEvent).frame.length;
    }
  }

  #disconnect(): void {
    this.#detachSink?.();
    this.#detachSink = null;
    this.#sink = null;
  }

  #armAbandon(): void {
    if (this.#ended || this.#onAbandoned === undefined) return;
    const onAbandoned = this.#onAbandoned;
    this.#abandonTimer = setTimeout(() => {
      this.#abandonTimer = null;
      if (!this.connected && !this.#ended) onAbandoned();
    }, RESUME_WINDOW_MS);
    this.#abandonTimer.unref();
  }

  #cancelAbandon(): void {
    if (this.#abandonTimer) clearTimeout(this.#abandonTimer);
    this.#abandonTimer = null;
  }
}

/** A `Last-Event-ID` of ours: `<stream>-<n>`. */
function parseEventId(text: string): { stream: number; seq: number } | null {
  const match = /^(\d{1,9})-(\d{1,15})$/.exec(text);
  return match ? { stream: Number(match[1]), seq: Number(match[2]) } : null;
}

/** The resumable streams of one session. */
export class SessionStreams {
  /** The session's own stream (GET). */
  readonly session = new ResumableStream(0);
  readonly #requests = new Map<number, ResumableStream>();
  /** Ended request streams, oldest first, each dropped when its window passes. */
  readonly #ended: Array<{ stream: ResumableStream; timer: NodeJS.Timeout }> = [];
  #next = 1;

  /** A new stream for a request's answer; `onAbandoned` cancels the request. */
  open(onAbandoned: () => void): ResumableStream {
    const stream = new ResumableStream(this.#next, onAbandoned);
    this.#next += 1;
    this.#requests.set(stream.id, stream);
    return stream;
  }

  /** A request stream carried its response: it ends, and stays replayable for the window. */
  finish(stream: ResumableStream): void {
    stream.end();
    const timer = setTimeout(() => this.#forget(stream), RESUME_WINDOW_MS);
    timer.unref();
    this.#ended.push({ stream, timer });
    while (this.#ended.length > ENDED_STREAMS_KEPT) this.#forget((this.#ended[0] as { stream: ResumableStream }).stream);
  }

  /** The stream a `Last-Event-ID` names and the event to resume after, while this session keeps it. */
  find(lastEventId: string): { stream: ResumableStream; after: number } | null {
    const id = parseEventId(lastEventId.trim());
    if (id === null) return null;
    const stream = id.stream === 0 ? this.session : this.#requests.get(id.stream);
    if (stream === undefined || !stream.canResumeAfter(id.seq)) return null;
    return { stream, after: id.seq };
  }

  /** Ends every connection and forgets every event (the session ended). */
  close(): void {
    this.session.close();
    for (const stream of this.#requests.values()) stream.close();
    for (const { timer } of this.#ended) clearTimeout(timer);
    this.#ended.length = 0;
    this.#requests.clear();
  }

  #forget(stream: ResumableStream): void {
    const at = this.#ended.findIndex((entry) => entry.stream === stream);
    if (at >= 0) clearTimeout((this.#ended.splice(at, 1)[0] as { timer: NodeJS.Timeout }).timer);
    this.#requests.delete(stream.id);
    stream.close();
  }
}
