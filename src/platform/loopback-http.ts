/**
 * HTTP/1.1 requests from a bridge to its shared server on loopback, written over `node:net`.
 * A bridge must start fast, and `node:http`'s client costs a bridge more than everything else it
 * loads together (its modules compile on first use, and its first request builds an agent and a
 * parser): measured in docs/PERFORMANCE.md. This client does only what a bridge needs from its
 * own server: one request per connection (`Connection: close`, so a refused connection proves a
 * request never ran), a body framed by `Content-Length`, `chunked` or the close, a deadline, and
 * abort. An answer sent as `text/event-stream` is read as it arrives: each event's data is handed
 * to `onEvent` at once (a follow's progress must reach the client while the call still runs).
 */
import { connect, type Socket } from 'node:net';
import { SseReader } from './sse.js';

export interface LoopbackRequest {
  /** `http://HOST:PORT` of the server. */
  base: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Readonly<Record<string, string>>;
  body?: string;
  /** Fails the request when no complete answer arrived by then (ms); none by default. */
  timeoutMs?: number;
  /** Receives the data of each `message` event of an answer sent as `text/event-stream`, as it arrives. */
  onEvent?: (data: string) => void;
}

export interface LoopbackResponse {
  status: number;
  /** Lower-case header names; the first value of a repeated header. */
  headers: ReadonlyMap<string, string>;
  /** The body; '' for an event stream, whose events went to `onEvent`. */
  body: string;
  /** Whether the answer was an event stream (it is complete: the stream ended). */
  eventStream: boolean;
}

/** A request under way: its answer, and a way to give it up. */
export interface PendingRequest {
  readonly response: Promise<LoopbackResponse>;
  /** Destroys the connection; the response rejects with `error`. */
  abort(error: Error): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** Whether a `Content-Type` is `text/event-stream`. */
export function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && /^text\/event-stream\s*(;|$)/i.test(contentType.trim());
}

/**
 * `Transfer-Encoding: chunked`, decoded as the bytes arrive: each piece of data is handed on at
 * once and nothing already decoded is looked at again.
 */
export class ChunkedDecoder {
  #buffer: Buffer = Buffer.alloc(0);
  /** Data bytes of the current chunk still to come; -1 while a size line is awaited, -2 its CRLF. */
  #remaining = -1;
  #done = false;

  /** Feeds bytes; `out` gets the data; answers true once the last chunk has arrived. */
  push(chunk: Buffer, out: (data: Buffer) => void): boolean {
    let buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (!this.#done) {
      if (this.#remaining === -1) {
        const lineEnd = buffer.indexOf('\r\n');
        if (lineEnd < 0) break;
        const size = Number.parseInt(buffer.subarray(0, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size) || size < 0) throw new Error('malformed chunked body');
        buffer = buffer.subarray(lineEnd + 2);
        if (size === 0) this.#done = true; // trailers, if any, are of no use here
        else this.#remaining = size;
      } else if (this.#remaining === -2) {
        if (buffer.length < 2) break;
        buffer = buffer.subarray(2);
        this.#remaining = -1;
      } else {
        if (buffer.length === 0) break;
        const take = Math.min(this.#remaining, buffer.length);
        out(buffer.subarray(0, take));
        buffer = buffer.subarray(take);
        this.#remaining -= take;
        if (this.#remaining === 0) this.#remaining = -2;
      }
    }
    this.#buffer = this.#done ? Buffer.alloc(0) : Buffer.from(buffer);
    return this.#done;
  }

  get done(): boolean {
    return this.#done;
  }
}

type Head = { status: number; headers: Map<string, string> };

/** A response's body as it arrives, framed by its length, by chunks, or by the close. */
class BodyReader {
  readonly #framing: { kind: 'length'; remaining: number } | { kind: 'chunked'; decoder: ChunkedDecoder } | { kind: 'close' };
  readonly #parts: Buffer[] = [];
  readonly #events: SseReader | null;

  constructor(head: Head, onEvent: ((data: string) => void) | undefined) {
    const declared = head.headers.get('content-length');
    if (head.status === 204 || head.status === 304) this.#framing = { kind: 'length', remaining: 0 };
    else if (head.headers.get('transfer-encoding')?.toLowerCase() === 'chunked') this.#framing = { kind: 'chunked', decoder: new ChunkedDecoder() };
    else if (declared !== undefined) this.#framing = { kind: 'length', remaining: Number(declared) };
    else this.#framing = { kind: 'close' };
    this.#events = isEventStream(head.headers.get('content-type')) ? new SseReader(onEvent ?? (() => undefined)) : null;
  }

  get eventStream(): boolean {
    return this.#events !== null;
  }

  get complete(): boolean {
    const framing = this.#framing;
    return framing.kind === 'length' ? framing.remaining <= 0 : framing.kind === 'chunked' && framing.decoder.done;
  }

  /** Feeds bytes; answers true once the body is complete. */
  push(chunk: Buffer): boolean {
    const framing = this.#framing;
    const out = (data: Buffer): void => {
      if (this.#events) this.#events.push(data);
      else this.#parts.push(data);
    };
    if (framing.kind === 'chunked') return framing.decoder.push(chunk, out);
    if (framing.kind === 'close') {
      out(chunk);
      return false;
    }
    const take = Math.min(framing.remaining, chunk.length);
    if (take > 0) out(chunk.subarray(0, take));
    framing.remaining -= take;
    return framing.remaining <= 0;
  }

  /** The connection closed: whether the body is complete now (a body framed by the close is). */
  close(): boolean {
    return this.#framing.kind === 'close' || this.complete;
  }

  text(): string {
    this.#events?.end();
    return this.#events ? '' : Buffer.concat(this.#parts).toString('utf8');
  }
}

class ResponseParser {
  #buffer: Buffer = Buffer.alloc(0);
  #head: Head | null = null;
  #body: BodyReader | null = null;
  readonly #onEvent: ((data: string) => void) | undefined;

  constructor(onEvent: ((data: string) => void) | undefined) {
    this.#onEvent = onEvent;
  }

  /** Feeds bytes; answers the response once it is complete. */
  push(chunk: Buffer): LoopbackResponse | null {
    if (this.#head === null || this.#body === null) {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      const end = this.#buffer.indexOf(HEADER_END);
      if (end < 0) return null;
      this.#head = parseHead(this.#buffer.subarray(0, end).toString('latin1'));
      this.#body = new BodyReader(this.#head, this.#onEvent);
      const rest = this.#buffer.subarray(end + HEADER_END.length);
      this.#buffer = Buffer.alloc(0);
      return this.#body.push(rest) || this.#body.complete ? this.#done(this.#head, this.#body) : null;
    }
    return this.#body.push(chunk) ? this.#done(this.#head, this.#body) : null;
  }

  /** The connection closed: a body framed by the close is complete now; anything else is not. */
  end(): LoopbackResponse | null {
    if (this.#head === null || this.#body === null) return null;
    return this.#body.close() ? this.#done(this.#head, this.#body) : null;
  }

  #done(head: Head, body: BodyReader): LoopbackResponse {
    return { status: head.status, headers: head.headers, body: body.text(), eventStream: body.eventStream };
  }
}

function parseHead(text: string): Head {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { status: Number(match[1]), headers };
}

/** `http://HOST:PORT` → the host as written (IPv6 in brackets) and the port. */
function authorityOf(base: string): { hostname: string; port: string } {
  const match = /^http:\/\/(\[[^\]]+\]|[^/:]+):(\d+)\/?$/.exec(base);
  if (!match) throw new Error(`not a loopback server base URL: ${base}`);
  return { hostname: match[1] as string, port: match[2] as string };
}

/** Sends one request on its own connection. */
export function loopbackRequest(options: LoopbackRequest): PendingRequest {
  const { hostname, port } = authorityOf(options.base);
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const body = options.body === undefined ? undefined : Buffer.from(options.body, 'utf8');
  const lines = [`${options.method} ${options.path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${body.byteLength}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

  let socket: Socket | null = null;
  let fail: (error: Error) => void = () => {};
  const response = new Promise<LoopbackResponse>((resolve, reject) => {
    const parser = new ResponseParser(options.onEvent);
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: LoopbackResponse | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    fail = finish;
    const conn = connect(Number(port), host);
    socket = conn;
    if (options.timeoutMs !== undefined) timer = setTimeout(() => finish(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    conn.setNoDelay(true);
    conn.once('connect', () => conn.write(body === undefined ? head : Buffer.concat([head, body])));
    conn.on('data', (chunk: Buffer) => {
      try {
        const complete = parser.push(chunk);
        if (complete) finish(complete);
      } catch (error) {
        finish(error as Error);
      }
    });
    conn.on('error', (error) => finish(error));
    conn.on('close', () => {
      if (settled) return;
      try {
        finish(parser.end() ?? new Error(`${options.base} closed the connection before answering`));
      } catch (error) {
        finish(error as Error);
      }
    });
  });
  return { response, abort: (error) => fail(error) };
}
