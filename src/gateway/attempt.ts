/**
 * One entry of the chain: skipped while its provider cools down after a 429, then a slot from the
 * provider's limiter, then one attempt (upstream.ts) with the request the provider's kind builds.
 * A failure is handed back for the failover walk to move on; an answer is forwarded — a stream
 * relayed from its first byte (relay.ts), anything else read whole first (whole.ts).
 */
import type { RouteReply } from '../platform/http-exchange.js';
import type { ChainEntry } from './config.js';
import type { Flow } from './flow.js';
import type { ProviderState } from './provider-states.js';
import { relayStream } from './relay.js';
import { readWhole } from './whole.js';

/** Why an entry was given up on: the walk's answer depends on whether all were alike. */
export type FailureKind = 'rate_limited' | 'busy' | 'failed';

/** What one entry of the chain came to. */
export type Tried =
  | { kind: 'answered'; reply: RouteReply }
  | { kind: 'failed'; reason: string; why: FailureKind; retryAt: number | null };

function failed(reason: string, why: FailureKind = 'failed', retryAt: number | null = null): Tried {
  return { kind: 'failed', reason, why, retryAt };
}

/** The cooling that keeps `state` out of the chain now, as a failure; null when it may be tried. */
function cooling(state: ProviderState): Tried | null {
  const left = state.coolingUntil - Date.now();
  if (left <= 0) return null;
  return failed(`cooling down, Retry-After ${Math.ceil(left / 1000)} s left`, 'rate_limited', state.coolingUntil);
}

/** Tries `entry`; `retry` is the one try after waiting out its Retry-After (cooling is not checked). */
export async function tryEntry(flow: Flow, entry: ChainEntry, retry = false): Promise<Tried> {
  const state = flow.context.providers.get(entry.provider);
  const provider = flow.config.providers.get(entry.provider);
  if (!state || !provider) return failed('the provider left the config');
  const before = retry ? null : cooling(state);
  if (before) return before;
  const slot = await state.limiter.acquire(flow.request.signal);
  if (!slot.ok) {
    return slot.reason === 'full' ? failed(`queue full (${provider.maxConcurrent} running, ${provider.maxQueue} waiting)`, 'busy') : failed('the client went away');
  }
  // It may have started cooling while this request waited in its queue.
  const after = retry ? null : cooling(state);
  if (after) {
    slot.release();
    return after;
  }
  flow.last = entry;
  flow.sent = true;
  const call = { body: flow.chat.body, stream: flow.chat.stream, model: entry.model, reasoningEffort: entry.reasoningEffort };
  const result = await state.endpoint.attempt({
    request: provider.kind.request(provider, call),
    kind: provider.kind,
    timeoutMs: provider.firstByteTimeoutMs,
    signal: flow.request.signal,
  });
  if (result.kind === 'failure') {
    slot.release();
    let retryAt: number | null = null;
    if (result.rateLimited && result.retryAfterMs !== null) {
      retryAt = Date.now() + result.retryAfterMs;
      state.coolingUntil = Math.max(state.coolingUntil, retryAt);
    }
    return failed(result.reason, result.rateLimited ? 'rate_limited' : 'failed', retryAt);
  }
  if (flow.chat.stream && result.status >= 200 && result.status < 300) {
    return { kind: 'answered', reply: relayStream(flow, entry, provider, result, slot.release) };
  }
  const reply = await readWhole(flow, entry, provider, result, slot.release);
  return reply === null ? failed('the connection broke before the answer was whole') : { kind: 'answered', reply };
}
