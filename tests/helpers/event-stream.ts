/**
 * An HTTP answer read as it arrives, over `node:http`: for `text/event-stream` answers that stay
 * open (`GET /mcp`) or whose events must be seen before the end. Resolves at the head; the body
 * accumulates; `ended` settles when the server ends the answer (or the connection breaks).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body received so far. */
  text(): string;
  /** Resolves when the server has ended the answer; `complete` is false for a broken connection. */
  readonly ended: Promise<{ complete: boolean }>;
  /** Leaves: destroys the connection. */
  close(): void;
}

export interface EventStreamRequest {
  port: number;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export function openEventStream(options: EventStreamRequest): Promise<EventStream> {
  const { port, method = 'GET', path = '/mcp', body, timeoutMs = 20_000 } = options;
  const headers = { ...(options.headers ?? {}), ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      clearTimeout(timer);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      const ended = new Promise<{ complete: boolean }>((done) => {
        res.on('end', () => done({ complete: true }));
        res.on('error', () => done({ complete: false }));
        res.on('close', () => done({ complete: res.complete }));
      });
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => text, ended, close: () => req.destroy() });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${method} ${path}`));
    }, timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}

/** The JSON-RPC messages of the `message` events in an SSE text (an `id` line before them or not), in order. */
export function sseMessages(text: string): any[] {
  return text
    .split('\n\n')
    .filter((event) => /^(?:id: [^\n]*\n)?event: message\ndata: /.test(event))
    .map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 'data: '.length)));
}

/** The `id` of every event in an SSE text, in order (a priming event's too). */
export function sseIds(text: string): string[] {
  return [...text.matchAll(/^id: (.*)$/gm)].map((match) => match[1] as string);
}
