/**
 * One attempt at one provider: POST the body to `<base_url>/chat/completions` over a kept-alive
 * `node:http(s)` agent (one per provider: lower overhead than fetch), and settle as soon as the
 * attempt's fate is known — the first body byte of a usable answer, or a failure the gateway may
 * fail over on (connection refused or reset, no first byte in time, 429, 5xx). Nothing is
 * forwarded here: the caller decides, and only it writes to the client.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { errorMessage } from '../platform/errors.js';
import type { ProviderConfig } from './config.js';

/** How much of an error body is read to quote its message. */
const ERROR_BODY_LIMIT = 8 * 1024;

/** Where one provider's requests go, and the agent that keeps its connections. */
export class UpstreamEndpoint {
  readonly url: URL;
  readonly #agent: HttpAgent;
  readonly #secure: boolean;

  constructor(baseUrl: string) {
    this.url = new URL(`${baseUrl}/chat/completions`);
    this.#secure = this.url.protocol === 'https:';
    const options = { keepAlive: true, scheduling: 'lifo' as const };
    this.#agent = this.#secure ? new HttpsAgent(options) : new HttpAgent(options);
  }

  /** Closes the kept-alive connections (the provider left the config). */
  close(): void {
    this.#agent.destroy();
  }

  /** Sends one request; see `AttemptResult`. */
  attempt(options: AttemptOptions): Promise<AttemptResult> {
    return new Promise<AttemptResult>((resolve) => this.#send(options, resolve, false));
  }

  #send(options: AttemptOptions, settle: (result: AttemptResult) => void, retried: boolean): void {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': options.body.byteLength,
      accept: options.stream ? 'text/event-stream' : 'application/json',
    };
    if (options.apiKey !== null) headers.authorization = `Bearer ${options.apiKey}`;
    const send = this.#secure ? httpsRequest : httpRequest;
    const request = send(this.url, { method: 'POST', headers, agent: this.#agent });
    let settled = false;
    let gotResponse = false;
    const finish = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      settle(result);
    };
    const fail = (reason: string, status: number | null = null, retryAfterMs: number | null = null): void => {
      if (settled) return;
      request.destroy();
      finish({ kind: 'failure', reason, status, retryAfterMs });
    };
    const timer = setTimeout(() => fail(`no first byte within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    const onAbort = (): void => fail('the client went away');
    options.signal.addEventListener('abort', onAbort, { once: true });

    request.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      // A kept-alive connection the server closed while this request went out: once, on a new one.
      if (!gotResponse && !retried && request.reusedSocket && error.code === 'ECONNRESET') {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        settled = true;
        this.#send(options, settle, true);
        return;
      }
      finish({ kind: 'failure', reason: connectionReason(error), status: null, retryAfterMs: null });
    });
    request.on('response', (response) => {
      gotResponse = true;
      const status = response.statusCode ?? 0;
      if (status === 429 || status >= 500) {
        void errorText(response).then((text) => {
          const retryAfterMs = status === 429 ? parseRetryAfter(response.headers['retry-after'], Date.now()) : null;
          const after = retryAfterMs === null ? '' : ` Retry-After ${Math.ceil(retryAfterMs / 1000)} s`;
          fail(`${status}${after}${text === '' ? '' : `: ${text}`}`, status, retryAfterMs);
        });
        return;
      }
      // A usable answer (2xx, or a 4xx that is the client's to read): settled at its first byte.
      const onData = (chunk: Buffer): void => {
        response.pause();
        response.off('data', onData);
        response.off('end', onEnd);
        finish({ kind: 'response', status, headers: response.headers, body: response, first: chunk, ended: false });
      };
      const onEnd = (): void => {
        response.off('data', onData);
        finish({ kind: 'response', status, headers: response.headers, body: response, first: null, ended: true });
      };
      response.on('data', onData);
      response.once('end', onEnd);
      response.once('error', () => fail('the connection broke before the first byte'));
    });
    request.end(options.body);
  }
}

export interface AttemptOptions {
  body: Uint8Array;
  stream: boolean;
  apiKey: string | null;
  timeoutMs: number;
  /** The client went away: the attempt is given up and its connection closed. */
  signal: AbortSignal;
}

export type AttemptResult =
  | {
      kind: 'response';
      status: number;
      headers: IncomingHttpHeaders;
      /** Paused after `first`; the caller resumes it and must read it to the end or destroy it. */
      body: IncomingMessage;
      /** The first body chunk, or null when the body was empty (`ended`). */
      first: Buffer | null;
      ended: boolean;
    }
  | {
      kind: 'failure';
      /** Short and readable: `connection refused`, `503: overloaded`, `429 Retry-After 2 s`. */
      reason: string;
      /** The upstream's status when it answered one. */
      status: number | null;
      /** From a 429's `Retry-After`, in ms from now. */
      retryAfterMs: number | null;
    };

function connectionReason(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${error.code})`;
    default:
      return `connection failed: ${errorMessage(error)}`;
  }
}

/** The message of an upstream error body (OpenAI's `{error: {message}}`), one line, bounded. */
async function errorText(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
      if (size >= ERROR_BODY_LIMIT) break;
    }
  } catch {
    // what arrived is enough
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_LIMIT);
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const candidate = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof candidate === 'string') message = candidate;
  } catch {
    // not JSON: quote the text
  }
  return message.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** `Retry-After` (seconds or an HTTP date) in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
