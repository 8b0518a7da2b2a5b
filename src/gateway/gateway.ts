/**
 * The model gateway's request flow, on the HTTP thread: `POST /v1/chat/completions` and
 * `GET /v1/models`, OpenAI's wire rather than ours, always behind the lease's token (or the
 * configured gateway key).
 *
 * A request is routed (routing.ts), then tried entry by entry: a cooling provider is skipped, a
 * slot is taken from the provider's limiter, one attempt is made (upstream.ts). Failures the
 * client cannot fix — connection refused or reset, no first byte in time, 429, 5xx — move on to
 * the next entry; a 4xx other than 429 is the client's and is forwarded as it is. A stream is
 * committed at its first byte and passed through untouched from then on: a failure after that
 * cuts it, never retries it. The slot is held until the answer is forwarded whole (or the client
 * goes away, which aborts the upstream request too).
 */
import type { IncomingMessage } from 'node:http';
import { errorMessage, type WireErrorCode, WIRE_ERRORS } from '../platform/errors.js';
import { bearerMatches } from '../platform/access.js';
import type { HttpReply, ReplySink, RouteReply, StreamedReply } from '../platform/http-exchange.js';
import type { HttpRequest } from '../platform/http-exchange.js';
import { decodeUtf8, JsonInputError, parseJsonInput } from '../platform/json-input.js';
import { log } from '../platform/log.js';
import type { ChainEntry, GatewayConfig, GatewayConfigFile } from './config.js';
import { Limiter, type Release } from './limiter.js';
import { decideRoute, listedModels } from './routing.js';
import { UpstreamEndpoint, type AttemptResult } from './upstream.js';
import { SseUsageScanner, tokensOf, type UsageReport } from './usage.js';

export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';
export const MODELS_PATH = '/v1/models';
/** The response header naming where a request went and what was given up on the way. */
export const ROUTE_HEADER = 'X-Majordomus-Route';

const TASK_ID = /^[A-Za-z0-9-]{1,64}$/;
/** What a busy answer (a full queue) tells the client to wait. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export interface GatewayOptions {
  config: GatewayConfigFile;
  /** The lease's token: always accepted. */
  token: string;
  /** Called once per request that reached a provider, after its answer ended. */
  report: UsageReport;
}

/** One entry given up on, as the route header and the logs show it. */
export interface Failover {
  provider: string;
  model: string;
  reason: string;
}

interface ProviderState {
  baseUrl: string;
  endpoint: UpstreamEndpoint;
  limiter: Limiter;
  /** Epoch ms until which a 429's Retry-After keeps the provider out of the chain. */
  coolingUntil: number;
}

/** What one entry of the chain came to. */
type Tried =
  | { kind: 'answered'; reply: RouteReply }
  | { kind: 'failed'; reason: string; why: 'rate_limited' | 'busy' | 'failed'; sent: boolean; retryAt: number | null };

/** The request as the flow carries it from entry to entry. */
interface Flow {
  request: HttpRequest;
  config: GatewayConfig;
  body: Record<string, unknown>;
  stream: boolean;
  task: string | null;
  failovers: Failover[];
  /** The entry tried last (the route header's provider and model). */
  last: ChainEntry | null;
  /** Whether any attempt reached a provider (then a usage record is reported). */
  sent: boolean;
}

/** An error in our shape plus OpenAI's `type`, so OpenAI clients print the message. */
export function gatewayError(code: WireErrorCode, message: string, headers: Array<[string, string]> = []): HttpReply {
  const status = WIRE_ERRORS[code].status;
  const type =
    status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { status, contentType: 'application/json', headers, body: JSON.stringify({ error: { code, message, type } }) };
}

/** JSON with every non-ASCII character escaped: a header value must be ASCII. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function routeHeader(flow: Pick<Flow, 'last' | 'failovers'>): [string, string] {
  return [ROUTE_HEADER, asciiJson({ provider: flow.last?.provider ?? null, model: flow.last?.model ?? null, failovers: flow.failovers })];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The rest of a body whose first chunk was read (null when it broke off). It may have ended, or
 * broken, while nobody listened: a paused stream still ends once its buffer is empty.
 */
function readAll(body: IncomingMessage, first: Buffer | null, ended: boolean, signal: AbortSignal): Promise<Buffer | null> {
  if (ended || body.readableEnded) return Promise.resolve(first ?? Buffer.alloc(0));
  if (body.destroyed) return Promise.resolve(null);
  return new Promise((resolve) => {
    const chunks: Buffer[] = first ? [first] : [];
    const onAbort = (): void => void body.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (value: Buffer | null): void => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => settle(Buffer.concat(chunks)));
    body.once('error', () => settle(null));
    body.once('close', () => settle(null)); // after 'end' this settles nothing new
    body.resume();
  });
}

export class Gateway {
  readonly #options: GatewayOptions;
  readonly #states = new Map<string, ProviderState>();
  #synced: GatewayConfig | null = null;

  constructor(options: GatewayOptions) {
    this.#options = options;
  }

  /** Answers a request to one of the gateway's paths (`CHAT_COMPLETIONS_PATH`, `MODELS_PATH`). */
  async handle(request: HttpRequest): Promise<RouteReply> {
    try {
      return await this.#handle(request);
    } catch (error) {
      log.error(`gateway: ${errorMessage(error)}`);
      return gatewayError('internal', errorMessage(error));
    }
  }

  /** Closes every provider's kept-alive connections. */
  close(): void {
    for (const state of this.#states.values()) state.endpoint.close();
    this.#states.clear();
  }

  async #handle(request: HttpRequest): Promise<RouteReply> {
    const models = request.path === MODELS_PATH;
    const wanted = models ? 'GET' : 'POST';
    if (request.method !== wanted) {
      return gatewayError('method_not_allowed', `${request.method} is not allowed on ${request.path}; use ${wanted}`, [['Allow', models ? 'GET, HEAD' : 'POST']]);
    }
    const reading = await this.#options.config.current();
    const key = reading.ok ? reading.config.gatewayKey : null;
    if (!bearerMatches(request.authorization, this.#options.token) && !(key !== null && bearerMatches(request.authorization, key))) {
      return gatewayError(
        'unauthorized',
        "send Authorization: Bearer <token>: the token of the checkout's lease (.ai/local/state/mcp/server.json by default) or the key named by gateway.api_key_env",
        [['WWW-Authenticate', 'Bearer realm="majordomus"']],
      );
    }
    if (!reading.ok) return gatewayError('gateway_config', reading.message);
    this.#sync(reading.config);
    if (models) {
      return {
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ object: 'list', data: listedModels(reading.config).map(({ id, owned_by }) => ({ id, object: 'model', created: 0, owned_by })) }),
      };
    }
    return this.#chat(request, reading.config);
  }

  /** Keeps one live state per provider across reloads (its limiter, agent and cooling). */
  #sync(config: GatewayConfig): void {
    if (this.#synced === config) return;
    this.#synced = config;
    for (const slug of [...this.#states.keys()]) {
      if (!config.providers.has(slug)) this.#states.delete(slug); // in-flight requests keep their own reference
    }
    for (const provider of config.providers.values()) {
      const state = this.#states.get(provider.slug);
      if (state && state.baseUrl === provider.baseUrl) {
        state.limiter.setLimits(provider.maxConcurrent, provider.maxQueue);
        continue;
      }
      this.#states.set(provider.slug, {
        baseUrl: provider.baseUrl,
        endpoint: new UpstreamEndpoint(provider.baseUrl),
        limiter: state?.limiter ?? new Limiter(provider.maxConcurrent, provider.maxQueue),
        coolingUntil: state?.coolingUntil ?? 0,
      });
      state?.limiter.setLimits(provider.maxConcurrent, provider.maxQueue);
    }
  }

  async #chat(request: HttpRequest, config: GatewayConfig): Promise<RouteReply> {
    const early: Pick<Flow, 'last' | 'failovers'> = { last: null, failovers: [] };
    const refuse = (code: WireErrorCode, message: string): HttpReply => gatewayError(code, message, [routeHeader(early)]);
    if (request.task !== '' && !TASK_ID.test(request.task)) {
      return refuse('invalid_input', `X-Majordomus-Task must be 1 to 64 characters of A-Z, a-z, 0-9 and "-", not ${JSON.stringify(request.task.slice(0, 80))}`);
    }
    if (!/^application\/json\s*(;|$)/i.test(request.contentType.trim())) {
      return refuse('unsupported_media_type', `send the body as application/json, not ${JSON.stringify(request.contentType || 'no Content-Type')}`);
    }
    let body: unknown;
    try {
      body = parseJsonInput(decodeUtf8(request.body));
    } catch (error) {
      if (error instanceof JsonInputError) return refuse('invalid_json', `the body is not usable JSON: ${error.message}`);
      throw error;
    }
    if (!isRecord(body)) return refuse('invalid_json', 'the body must be a JSON object (a chat completion request)');
    const model = body.model;
    if (model !== undefined && model !== null && (typeof model !== 'string' || model === '')) {
      return refuse('invalid_input', 'model must be a non-empty string, or left out to follow routing.priority_models');
    }
    const decision = decideRoute(config, typeof model === 'string' ? model : null);
    if (!decision.ok) return refuse(decision.code, decision.message);

    const flow: Flow = {
      request,
      config,
      body,
      stream: body.stream === true,
      task: request.task === '' ? null : request.task,
      failovers: [],
      last: null,
      sent: false,
    };
    const failures: Array<Extract<Tried, { kind: 'failed' }> & { entry: ChainEntry }> = [];
    const giveUp = (entry: ChainEntry, tried: Extract<Tried, { kind: 'failed' }>, next: ChainEntry | undefined): void => {
      failures.push({ ...tried, entry });
      flow.failovers.push({ provider: entry.provider, model: entry.model, reason: tried.reason });
      log.warn(`gateway: ${entry.provider}/${entry.model}: ${tried.reason}; ${next ? `trying ${next.provider}/${next.model}` : 'no entry left'}`);
    };
    const entries = decision.entries;
    for (const [index, entry] of entries.entries()) {
      if (request.signal.aborted) break;
      const tried = await this.#try(flow, entry);
      if (tried.kind === 'answered') return tried.reply;
      giveUp(entry, tried, entries[index + 1]);
    }
    // Out of entries: one more try at the provider whose Retry-After ends soonest, when that is
    // within the budget.
    const now = Date.now();
    const soonest = failures
      .filter((failure) => failure.why === 'rate_limited' && failure.retryAt !== null && failure.retryAt - now <= config.retryAfterBudgetMs)
      .sort((a, b) => (a.retryAt as number) - (b.retryAt as number))[0];
    if (soonest && !request.signal.aborted) {
      const wait = Math.max(0, (soonest.retryAt as number) - now);
      log.info(`gateway: waiting ${Math.ceil(wait / 1000)} s for ${soonest.entry.provider}/${soonest.entry.model} (Retry-After), then trying it once more`);
      await sleep(wait, request.signal);
      if (!request.signal.aborted) {
        const tried = await this.#try(flow, soonest.entry, true);
        if (tried.kind === 'answered') return tried.reply;
        giveUp(soonest.entry, tried, undefined);
      }
    }
    return this.#exhausted(flow, failures);
  }

  /** The answer when no entry answered: 429 when all were rate-limited, 503 when all were full, else 502. */
  #exhausted(flow: Flow, failures: ReadonlyArray<Extract<Tried, { kind: 'failed' }> & { entry: ChainEntry }>): HttpReply {
    if (flow.sent && flow.last) this.#report(flow, flow.last, null, false);
    const listed = failures.map((failure) => `${failure.entry.provider}/${failure.entry.model} (${failure.reason})`).join('; ');
    const route = routeHeader(flow);
    if (flow.request.signal.aborted) return gatewayError('upstream_unavailable', 'the client went away', [route]);
    if (failures.length > 0 && failures.every((failure) => failure.why === 'rate_limited')) {
      const now = Date.now();
      const ends = failures.map((failure) => failure.retryAt).filter((at): at is number => at !== null);
      const seconds = ends.length === 0 ? 1 : Math.max(1, Math.ceil((Math.min(...ends) - now) / 1000));
      return gatewayError('rate_limited', `every provider is rate-limited beyond the retry budget: ${listed}`, [route, ['Retry-After', String(seconds)]]);
    }
    if (failures.length > 0 && failures.every((failure) => failure.why === 'busy')) {
      return gatewayError('busy', `every provider's queue is full: ${listed}; retry in ${BUSY_RETRY_AFTER_SECONDS} s`, [
        route,
        ['Retry-After', String(BUSY_RETRY_AFTER_SECONDS)],
      ]);
    }
    return gatewayError('upstream_unavailable', `no provider answered: ${listed}`, [route]);
  }

  /** One entry: skip it while cooling, wait for a slot, make the attempt, forward what is usable. */
  async #try(flow: Flow, entry: ChainEntry, retry = false): Promise<Tried> {
    const state = this.#states.get(entry.provider);
    const provider = flow.config.providers.get(entry.provider);
    if (!state || !provider) return { kind: 'failed', reason: 'the provider left the config', why: 'failed', sent: false, retryAt: null };
    const cooling = (): Tried | null => {
      const left = state.coolingUntil - Date.now();
      if (retry || left <= 0) return null;
      return { kind: 'failed', reason: `cooling down, Retry-After ${Math.ceil(left / 1000)} s left`, why: 'rate_limited', sent: false, retryAt: state.coolingUntil };
    };
    const before = cooling();
    if (before) return before;
    const slot = await state.limiter.acquire(flow.request.signal);
    if (!slot.ok) {
      return slot.reason === 'full'
        ? { kind: 'failed', reason: `queue full (${provider.maxConcurrent} running, ${provider.maxQueue} waiting)`, why: 'busy', sent: false, retryAt: null }
        : { kind: 'failed', reason: 'the client went away', why: 'failed', sent: false, retryAt: null };
    }
    // It may have started cooling while this request waited in its queue.
    const after = cooling();
    if (after) {
      slot.release();
      return after;
    }
    flow.last = entry;
    flow.sent = true;
    const result = await state.endpoint.attempt({
      body: Buffer.from(JSON.stringify(this.#upstreamBody(flow, entry))),
      stream: flow.stream,
      apiKey: provider.apiKey,
      timeoutMs: provider.firstByteTimeoutMs,
      signal: flow.request.signal,
    });
    if (result.kind === 'failure') {
      slot.release();
      let retryAt: number | null = null;
      if (result.status === 429 && result.retryAfterMs !== null) {
        retryAt = Date.now() + result.retryAfterMs;
        state.coolingUntil = Math.max(state.coolingUntil, retryAt);
      }
      return { kind: 'failed', reason: result.reason, why: result.status === 429 ? 'rate_limited' : 'failed', sent: true, retryAt };
    }
    if (flow.stream && result.status >= 200 && result.status < 300) {
      return { kind: 'answered', reply: this.#passThrough(flow, entry, result, slot.release) };
    }
    return this.#whole(flow, entry, result, slot.release);
  }

  /** The client's body, sent to `entry`: its model, the chain's reasoning effort, usage in streams. */
  #upstreamBody(flow: Flow, entry: ChainEntry): Record<string, unknown> {
    const body: Record<string, unknown> = { ...flow.body, model: entry.model };
    if (entry.reasoningEffort !== null) body.reasoning_effort = entry.reasoningEffort;
    if (flow.stream) body.stream_options = { ...(isRecord(flow.body.stream_options) ? flow.body.stream_options : {}), include_usage: true };
    return body;
  }

  /** A whole answer (not a stream, or a 4xx): read to the end, then answered with its length. */
  async #whole(flow: Flow, entry: ChainEntry, result: Extract<AttemptResult, { kind: 'response' }>, release: Release): Promise<Tried> {
    let bytes: Buffer | null;
    try {
      bytes = await readAll(result.body, result.first, result.ended, flow.request.signal);
    } finally {
      release();
    }
    if (bytes === null) {
      return { kind: 'failed', reason: 'the connection broke before the answer was whole', why: 'failed', sent: true, retryAt: null };
    }
    const ok = result.status >= 200 && result.status < 300;
    let usage = null;
    if (ok) {
      try {
        usage = tokensOf((JSON.parse(bytes.toString('utf8')) as { usage?: unknown }).usage);
      } catch {
        // not JSON: forwarded as it is, counted without tokens
      }
    }
    this.#report(flow, entry, usage, ok);
    const contentType = result.headers['content-type'];
    return {
      kind: 'answered',
      reply: { status: result.status, ...(contentType ? { contentType } : {}), headers: [routeHeader(flow)], body: bytes },
    };
  }

  /** A stream, committed: its bytes go to the client as they come, with backpressure both ways. */
  #passThrough(flow: Flow, entry: ChainEntry, result: Extract<AttemptResult, { kind: 'response' }>, release: Release): StreamedReply {
    const { body } = result;
    const signal = flow.request.signal;
    const scanner = new SseUsageScanner();
    let finished = false;
    const finish = (ok: boolean): void => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onGone);
      release();
      this.#report(flow, entry, scanner.usage, ok);
    };
    // Also before `start`: a client gone while the head was on its way never gets a sink.
    const onGone = (): void => {
      body.destroy();
      finish(false);
    };
    signal.addEventListener('abort', onGone, { once: true });
    if (signal.aborted) onGone();
    body.on('error', () => undefined); // the cut is handled on 'close'
    return {
      status: result.status,
      contentType: String(result.headers['content-type'] ?? 'text/event-stream'),
      headers: [routeHeader(flow)],
      start: (sink: ReplySink) => {
        if (finished) return sink.end();
        let held = false;
        const pass = (chunk: Buffer): void => {
          if (!sink.write(chunk) && !held) {
            held = true;
            body.pause();
            sink.onWritable(() => {
              held = false;
              body.resume();
            });
          }
          scanner.feed(chunk);
        };
        if (result.first) pass(result.first);
        // It may have ended (a paused stream still ends once its buffer is empty) or broken
        // while the head went out.
        if (result.ended || body.readableEnded) {
          sink.end();
          return finish(true);
        }
        if (body.destroyed) {
          sink.cut();
          return finish(false);
        }
        body.on('data', pass);
        body.once('end', () => {
          sink.end();
          finish(true);
        });
        body.once('close', () => {
          if (finished) return;
          log.warn(`gateway: ${entry.provider}/${entry.model}: the stream broke after its first byte; cut for the client too`);
          sink.cut();
          finish(false);
        });
        if (!held) body.resume();
      },
    };
  }

  #report(flow: Flow, entry: ChainEntry, usage: { prompt_tokens: number; completion_tokens: number } | null, ok: boolean): void {
    try {
      this.#options.report({
        task: flow.task,
        provider: entry.provider,
        model: entry.model,
        prompt_tokens: usage?.prompt_tokens ?? 0,
        completion_tokens: usage?.completion_tokens ?? 0,
        failovers: flow.failovers.length,
        ok,
      });
    } catch (error) {
      log.error(`gateway: the usage report failed: ${errorMessage(error)}`);
    }
  }
}
