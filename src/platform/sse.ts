/**
 * Reads a `text/event-stream` body as its bytes arrive: each complete event's data is handed on at
 * once, however the bytes were cut into packets (a line, or a multi-byte character, split across
 * two reads). Comments (keep-alives) and events of another type than `message` are skipped. It
 * imports nothing: the bridge, which must start fast, reads its server's streams with it.
 */

/** The SSE line parser of the WHATWG spec, reduced to what MCP's Streamable HTTP sends. */
export class SseReader {
  readonly #onMessage: (data: string) => void;
  readonly #decoder = new TextDecoder('utf-8');
  /** Text of a line not yet ended. */
  #pending = '';
  #data: string[] = [];
  #event = '';

  constructor(onMessage: (data: string) => void) {
    this.#onMessage = onMessage;
  }

  push(bytes: Uint8Array): void {
    this.#read(this.#decoder.decode(bytes, { stream: true }));
  }

  /** The stream ended: an event without its closing blank line is dropped, as the spec says. */
  end(): void {
    this.#read(this.#decoder.decode());
    this.#pending = '';
    this.#data = [];
    this.#event = '';
  }

  #read(text: string): void {
    const all = this.#pending + text;
    let start = 0;
    // What was pending holds no line end (but perhaps a last CR): scan on from there.
    for (let i = Math.max(0, this.#pending.length - 1); i < all.length; i += 1) {
      const code = all.charCodeAt(i);
      if (code !== 0x0a && code !== 0x0d) continue;
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (code === 0x0d && i + 1 === all.length) break;
      this.#line(all.slice(start, i));
      if (code === 0x0d && all.charCodeAt(i + 1) === 0x0a) i += 1;
      start = i + 1;
    }
    this.#pending = all.slice(start);
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data.length > 0 && (this.#event === '' || this.#event === 'message')) this.#onMessage(this.#data.join('\n'));
      this.#data = [];
      this.#event = '';
      return;
    }
    if (line.startsWith(':')) return; // a comment: a keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
