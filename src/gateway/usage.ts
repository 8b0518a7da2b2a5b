/**
 * What the gateway counts: one record per request that reached a provider, reported once it ended.
 * The record is plain data: it crosses to the harness thread, whose table (src/tasks/usage.ts)
 * sums it per provider, per caller and per task. The tokens come from the answer, read by its
 * provider kind; the cost from the price table of the config the request was served with.
 */
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { ChainEntry } from './config.js';
import type { Flow } from './flow.js';
import type { Charge } from './prices.js';
import type { Tokens } from './providers/provider.js';

export type { Charge } from './prices.js';

/** One forwarded request, as the gateway reports it once it ended. */
export interface UsageRecord {
  /** `X-Majordomus-Task` of the request (the harness session the executor runs as), if any. */
  task: string | null;
  /** Who sent it: `lease` for the lease's token, else the name of its key in `gateway.keys`. */
  key: string;
  /** The provider that answered (or the last one tried). */
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** How many providers failed before this one answered. */
  failovers: number;
  /** Whether a provider answered successfully. */
  ok: boolean;
  /** What its tokens cost (and saved against `prices.reference`); null when no price covers its model. */
  charge: Charge | null;
}

/** Where the gateway reports each record. */
export type UsageReport = (record: UsageRecord) => void;

/** Reports the request's record: once, by the job that ended it (a whole answer, a stream, or none). */
export function reportUsage(flow: Flow, entry: ChainEntry, usage: Tokens | null, ok: boolean): void {
  try {
    const tokens: Tokens = { prompt_tokens: usage?.prompt_tokens ?? 0, completion_tokens: usage?.completion_tokens ?? 0 };
    flow.context.report({
      task: flow.chat.task,
      key: flow.caller.name,
      provider: entry.provider,
      model: entry.model,
      ...tokens,
      failovers: flow.failovers.length,
      ok,
      charge: flow.config.prices?.charge(entry, tokens) ?? null,
    });
  } catch (error) {
    // A broken counter must not break the answer.
    log.error(`gateway: the usage report failed: ${errorMessage(error)}`);
  }
}
