/**
 * One attempt at one provider, over HTTP: send the request its kind built on a kept-alive
 * `node:http(s)` agent (one per provider: lower overhead than fetch), and settle as soon as the
 * attempt's fate is known — the first body byte of an answer the kind forwards, or a failure the
 * gateway may fail over on (connection refused or reset, no first byte in time, a head the kind
 * judges a failure). Nothing is forwarded here: the caller decides, and only it writes to the
 * client.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { errorMessage } from '../platform/errors.js';
import type { ProviderKind, UpstreamRequest } from './providers/provider.js';

/** How much of a failed answer's body is read to quote its message. */
const FAILURE_BODY_LIMIT = 8 * 1024;
/** How much of that message a reason quotes. */
const REASON_LIMIT = 300;

export interface AttemptOptions {
  request: UpstreamRequest;
  /** Judges the answer's head and words a failure's body. */
  kind: ProviderKind;
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
      /** Short and readable: `connection refused`, `503: overloaded`, `429 Retry-After 2 s: …`. */
      reason: string;
      /** The kind judged it a rate limit (the provider cools down). */
      rateLimited: boolean;
      /** From the answer's `Retry-After`, in ms from now. */
      retryAfterMs: number | null;
    };

/** The agent that keeps one provider's connections. */
export class UpstreamEndpoint {
  readonly #agent: HttpAgent;
  readonly #secure: boolean;

  constructor(baseUrl: string) {
    this.#secure = new URL(baseUrl).protocol === 'https:';
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
    const { request: upstream, kind } = options;
    const headers = { ...upstream.headers, 'content-length': String(upstream.body.byteLength) };
    const send = this.#secure ? httpsRequest : httpRequest;
    const request = send(upstream.url, { method: 'POST', headers, agent: this.#agent });
    let settled = false;
    let gotResponse = false;
    const finish = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      settle(result);
    };
    const fail = (reason: string, rateLimited = false, retryAfterMs: number | null = null): void => {
      if (settled) return;
      request.destroy();
      finish({ kind: 'failure', reason, rateLimited, retryAfterMs });
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
      finish({ kind: 'failure', reason: connectionReason(error), rateLimited: false, retryAfterMs: null });
    });
    request.on('response', (response) => {
      gotResponse = true;
      const status = response.statusCode ?? 0;
      const verdict = kind.judge(status, response.headers, Date.now());
      if (!verdict.forward) {
        void failureText(response).then((text) => {
          const message = text === '' ? '' : kind.failureMessage(text).replace(/\s+/g, ' ').trim().slice(0, REASON_LIMIT);
          const after = verdict.retryAfterMs === null ? '' : ` Retry-After ${Math.ceil(verdict.retryAfterMs / 1000)} s`;
          fail(`${status}${after}${message === '' ? '' : `: ${message}`}`, verdict.rateLimited, verdict.retryAfterMs);
        });
        return;
      }
      // Settled at its first byte: from then on the answer is the caller's.
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
    request.end(upstream.body);
  }
}

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

/** The first few KiB of a failed answer's body, as text. */
async function failureText(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
      if (size >= FAILURE_BODY_LIMIT) break;
    }
  } catch {
    // what arrived is enough
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, FAILURE_BODY_LIMIT);
}
