/**
 * HTTP/1.1 requests from a bridge to its shared server on loopback, written over `node:net`.
 * A bridge must start fast, and `node:http`'s client costs a bridge more than everything else it
 * loads together (its modules compile on first use, and its first request builds an agent and a
 * parser): measured in docs/PERFORMANCE.md. This client does only what a bridge needs from its
 * own server: one request per connection (`Connection: close`, so a refused connection proves a
 * request never ran), a body framed by `Content-Length` or `chunked`, a deadline, and abort.
 */
import { connect, type Socket } from 'node:net';

export interface LoopbackRequest {
  /** `http://HOST:PORT` of the server. */
  base: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Readonly<Record<string, string>>;
  body?: string;
  /** Fails the request when no complete answer arrived by then (ms); none by default. */
  timeoutMs?: number;
}

export interface LoopbackResponse {
  status: number;
  /** Lower-case header names; the first value of a repeated header. */
  headers: ReadonlyMap<string, string>;
  body: string;
}

/** A request under way: its answer, and a way to give it up. */
export interface PendingRequest {
  readonly response: Promise<LoopbackResponse>;
  /** Destroys the connection; the response rejects with `error`. */
  abort(error: Error): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

class ResponseParser {
  #buffer: Buffer = Buffer.alloc(0);
  #head: { status: number; headers: Map<string, string> } | null = null;

  /** Feeds bytes; answers the response once it is complete. */
  push(chunk: Buffer): LoopbackResponse | null {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    if (this.#head === null) {
      const end = this.#buffer.indexOf(HEADER_END);
      if (end < 0) return null;
      this.#head = parseHead(this.#buffer.subarray(0, end).toString('latin1'));
      this.#buffer = this.#buffer.subarray(end + HEADER_END.length);
    }
    return this.#complete(false);
  }

  /** The connection closed: a body framed by the close is complete now. */
  end(): LoopbackResponse | null {
    return this.#head === null ? null : this.#complete(true);
  }

  #complete(closed: boolean): LoopbackResponse | null {
    const head = this.#head as { status: number; headers: Map<string, string> };
    const done = (body: Buffer): LoopbackResponse => ({ status: head.status, headers: head.headers, body: body.toString('utf8') });
    if (head.status === 204 || head.status === 304) return done(Buffer.alloc(0));
    if (head.headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
      // Closed before the last chunk: incomplete, and the caller says so.
      const body = dechunk(this.#buffer);
      return body === null ? null : done(body);
    }
    const declared = head.headers.get('content-length');
    if (declared !== undefined) {
      const length = Number(declared);
      return this.#buffer.length >= length ? done(this.#buffer.subarray(0, length)) : null;
    }
    return closed ? done(this.#buffer) : null;
  }
}

function parseHead(text: string): { status: number; headers: Map<string, string> } {
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

/** The body of complete chunked data, or null while the last chunk has not arrived. */
function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('malformed chunked body');
    const start = lineEnd + 2;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < start + size + 2) return null;
    parts.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** Sends one request on its own connection. */
/** `http://HOST:PORT` → the host as written (IPv6 in brackets) and the port. */
function authorityOf(base: string): { hostname: string; port: string } {
  const match = /^http:\/\/(\[[^\]]+\]|[^/:]+):(\d+)\/?$/.exec(base);
  if (!match) throw new Error(`not a loopback server base URL: ${base}`);
  return { hostname: match[1] as string, port: match[2] as string };
}

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
    const parser = new ResponseParser();
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
