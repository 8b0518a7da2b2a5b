/**
 * A chat request's walk along its chain. The route decides the entries (routing.ts: an explicit
 * model is one strict entry, an omitted one the priority chain); each is tried in turn
 * (attempt.ts) until one answers. Failures the client cannot fix move on and show in the route
 * header and the log. Out of entries, the rate-limited entry whose Retry-After ends soonest gets
 * one more try when that is within `retry_after_budget_seconds`; otherwise the answer says why
 * no entry answered.
 */
import type { WireErrorCode } from '../platform/errors.js';
import type { HttpReply, HttpRequest, RouteReply } from '../platform/http-exchange.js';
import { log } from '../platform/log.js';
import { tryEntry, type Tried } from './attempt.js';
import type { ChainEntry, GatewayConfig } from './config.js';
import type { Flow, GatewayContext } from './flow.js';
import type { Front } from './front.js';
import { readChat } from './intake.js';
import type { Caller } from './keys.js';
import { routeHeader } from './route-header.js';
import { decideRoute } from './routing.js';
import { reportUsage } from './usage.js';

/** What a busy answer (a full queue) tells the client to wait. */
const BUSY_RETRY_AFTER_SECONDS = 1;

type Failure = Extract<Tried, { kind: 'failed' }> & { entry: ChainEntry };

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

/** Answers a chat request (`POST /v1/chat/completions`, or `/v1/messages` through its front) from `caller`. */
export async function chat(request: HttpRequest, config: GatewayConfig, context: GatewayContext, front: Front, caller: Caller): Promise<RouteReply> {
  const refuse = (code: WireErrorCode, message: string): HttpReply => front.error(code, message, [routeHeader({ last: null, failovers: [] })]);
  const read = readChat(request, front);
  if (!read.ok) return refuse(read.code, read.message);
  const decision = decideRoute(config, front.routedModel(config, read.chat.model), caller);
  if (!decision.ok) return refuse(decision.code, decision.message);

  const flow: Flow = { context, request, config, front, caller, chat: read.chat, failovers: [], last: null, sent: false };
  const failures: Failure[] = [];
  const giveUp = (entry: ChainEntry, tried: Extract<Tried, { kind: 'failed' }>, next: ChainEntry | undefined): void => {
    failures.push({ ...tried, entry });
    flow.failovers.push({ provider: entry.provider, model: entry.model, reason: tried.reason });
    log.warn(`gateway: ${entry.provider}/${entry.model}: ${tried.reason}; ${next ? `trying ${next.provider}/${next.model}` : 'no entry left'}`);
  };
  const entries = decision.entries;
  for (const [index, entry] of entries.entries()) {
    if (request.signal.aborted) break;
    const tried = await tryEntry(flow, entry);
    if (tried.kind === 'answered') return tried.reply;
    giveUp(entry, tried, entries[index + 1]);
  }
  const now = Date.now();
  const soonest = failures
    .filter((failure) => failure.why === 'rate_limited' && failure.retryAt !== null && failure.retryAt - now <= config.retryAfterBudgetMs)
    .sort((a, b) => (a.retryAt as number) - (b.retryAt as number))[0];
  if (soonest && !request.signal.aborted) {
    const wait = Math.max(0, (soonest.retryAt as number) - now);
    log.info(`gateway: waiting ${Math.ceil(wait / 1000)} s for ${soonest.entry.provider}/${soonest.entry.model} (Retry-After), then trying it once more`);
    await sleep(wait, request.signal);
    if (!request.signal.aborted) {
      const tried = await tryEntry(flow, soonest.entry, true);
      if (tried.kind === 'answered') return tried.reply;
      giveUp(soonest.entry, tried, undefined);
    }
  }
  return exhausted(flow, failures);
}

/** The answer when no entry answered: 429 when all were rate-limited, 503 when all were full, else 502. */
function exhausted(flow: Flow, failures: readonly Failure[]): HttpReply {
  if (flow.sent && flow.last) reportUsage(flow, flow.last, null, false);
  const listed = failures.map((failure) => `${failure.entry.provider}/${failure.entry.model} (${failure.reason})`).join('; ');
  const route = routeHeader(flow);
  const refusal = flow.front.error;
  if (flow.request.signal.aborted) return refusal('upstream_unavailable', 'the client went away', [route]);
  if (failures.length > 0 && failures.every((failure) => failure.why === 'rate_limited')) {
    const ends = failures.map((failure) => failure.retryAt).filter((at): at is number => at !== null);
    const seconds = ends.length === 0 ? 1 : Math.max(1, Math.ceil((Math.min(...ends) - Date.now()) / 1000));
    return refusal('rate_limited', `every provider is rate-limited beyond the retry budget: ${listed}`, [route, ['Retry-After', String(seconds)]]);
  }
  if (failures.length > 0 && failures.every((failure) => failure.why === 'busy')) {
    const message = `every provider's queue is full: ${listed}; retry in ${BUSY_RETRY_AFTER_SECONDS} s`;
    return refusal('busy', message, [route, ['Retry-After', String(BUSY_RETRY_AFTER_SECONDS)]]);
  }
  return refusal('upstream_unavailable', `no provider answered: ${listed}`, [route]);
}
