/**
 * The one reader of `text/event-stream` in the house (the bridge's, the gateway's, the executor's):
 * bytes go in as they arrive, each event comes out as soon as its closing blank line does, however
 * the bytes were cut (a line, a CRLF or a multi-byte character split across two reads). It follows
 * the WHATWG parsing rules: LF, CRLF and CR end a line; `:` opens a comment; one space after the
 * colon is dropped; `data` lines are joined with LF; an event without data is not dispatched; the
 * last `id` carries over to later events. It imports nothing: the bridge, which must start fast,
 * reads its server's streams with it.
 */

/** One dispatched event. */
export interface SseEvent {
  /** The `event` field, `message` when the event named none. */
  event: string;
  /** Its `data` lines joined with LF. */
  data: string;
  /** The last `id` field seen in the stream so far ('' when none). */
  id: string;
}

export interface SseParserOptions {
  /**
   * The most characters one event may hold (its data and the line being read). A larger event is
   * dropped whole, and reading goes on at the next event; the default is no limit.
   */
  maxEventChars?: number;
}

export class SseParser {
  readonly #onEvent: (event: SseEvent) => void;
  readonly #limit: number;
  readonly #decoder = new TextDecoder('utf-8');
  readonly #lineEnd = /[\r\n]/g;
  /** Text of a line not yet ended. */
  #line = '';
  /** The last line ended with CR: an LF arriving next is the second half of a CRLF. */
  #skipLf = false;
  /** A field line came since the last blank line. */
  #open = false;
  #data: string[] = [];
  #size = 0;
  #event = '';
  #id = '';
  /** Dropping an event over the limit: lines are ignored up to its blank line. */
  #dropping = false;
  /** The line being read is part of the dropped event: its own end is no blank line. */
  #droppingLine = false;

  constructor(onEvent: (event: SseEvent) => void, options: SseParserOptions = {}) {
    this.#onEvent = onEvent;
    this.#limit = options.maxEventChars ?? Number.POSITIVE_INFINITY;
  }

  /** The next bytes of the stream. An exception thrown by `onEvent` leaves through here. */
  push(bytes: Uint8Array): void {
    this.#read(this.#decoder.decode(bytes, { stream: true }));
  }

  /**
   * The stream ended. An event without its closing blank line is dropped, as the spec says, unless
   * `flush` (a lenient reader: the last event of a server that closed the connection after it).
   */
  end(options: { flush?: boolean } = {}): void {
    this.#read(this.#decoder.decode());
    if (options.flush && !this.#dropping) {
      if (this.#line !== '') this.#field(this.#line);
      this.#dispatch();
    }
    this.#line = '';
    this.#reset();
  }

  /**
   * What must be written after the bytes pushed so far for a new event to start cleanly: '' between
   * events, one line end after a whole line of an unfinished event, two in the middle of a line.
   * (A writer that ends a stream with an event of its own, however the stream before it stopped.)
   */
  get closing(): string {
    if (this.#line !== '' || this.#droppingLine) return '\n\n';
    if (!this.#open) return '';
    // After a CR an LF would only finish that line: one more makes the blank line.
    return this.#skipLf ? '\n\n' : '\n';
  }

  #read(text: string): void {
    if (text === '') return;
    let start = 0;
    if (this.#skipLf && text.charCodeAt(0) === 0x0a) start = 1;
    this.#skipLf = false;
    const lineEnd = this.#lineEnd;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
      const at = match.index;
      this.#endLine(text.slice(start, at));
      start = at + 1;
      if (text.charCodeAt(at) === 0x0d) {
        if (start === text.length) this.#skipLf = true;
        else if (text.charCodeAt(start) === 0x0a) start += 1;
      }
      lineEnd.lastIndex = start;
    }
    if (start < text.length) this.#extend(text.slice(start));
  }

  /** More of the line not yet ended. */
  #extend(text: string): void {
    if (this.#droppingLine) return;
    this.#line += text;
    if (this.#size + this.#line.length > this.#limit) this.#drop();
  }

  #endLine(tail: string): void {
    if (this.#droppingLine) {
      this.#droppingLine = false;
      return;
    }
    const line = this.#line + tail;
    this.#line = '';
    if (line === '') {
      if (!this.#dropping) this.#dispatch();
      this.#reset();
      return;
    }
    if (this.#dropping || line.charCodeAt(0) === 0x3a) return; // a comment (a keep-alive)
    if (this.#size + line.length > this.#limit) {
      this.#drop();
      this.#droppingLine = false; // this line has ended
      return;
    }
    this.#field(line);
  }

  #field(line: string): void {
    this.#open = true;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (name === 'data') {
      this.#data.push(value);
      this.#size += value.length + 1;
    } else if (name === 'event') this.#event = value;
    else if (name === 'id' && !value.includes('\0')) this.#id = value;
    // `retry` and unknown fields carry nothing a reader of ours uses.
  }

  #dispatch(): void {
    if (this.#data.length === 0) return;
    const event: SseEvent = { event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n'), id: this.#id };
    this.#reset();
    this.#onEvent(event);
  }

  #drop(): void {
    this.#line = '';
    this.#data = [];
    this.#size = 0;
    this.#dropping = true;
    this.#droppingLine = true;
    this.#open = true;
  }

  #reset(): void {
    this.#data = [];
    this.#size = 0;
    this.#event = '';
    this.#open = false;
    this.#dropping = false;
  }
}

/**
 * The data of each `message` event (named so or not) — the only events MCP's Streamable HTTP
 * sends: the bridge's view of its server's streams (src/platform/loopback-http.ts).
 */
export class SseReader {
  readonly #parser: SseParser;

  constructor(onMessage: (data: string) => void) {
    this.#parser = new SseParser((event) => {
      // An event without data is a priming event (an id and a retry for resuming): no message.
      if (event.event === 'message' && event.data !== '') onMessage(event.data);
    });
  }

  push(bytes: Uint8Array): void {
    this.#parser.push(bytes);
  }

  /** The stream ended: an event without its closing blank line is dropped. */
  end(): void {
    this.#parser.end();
  }
}
