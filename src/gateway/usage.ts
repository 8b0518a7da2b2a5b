/**
 * What the gateway counts: one record per request that reached a provider, reported once it ended.
 * The record is plain data: it crosses to the harness thread, whose table (src/tasks/usage.ts)
 * sums it per provider and per task. The tokens come from the answer, read by its provider kind.
 */
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { ChainEntry } from './config.js';
import type { Flow } from './flow.js';
import type { Tokens } from './providers/provider.js';

/** One forwarded request, as the gateway reports it once it ended. */
export interface UsageRecord {
  /** `X-Majordomus-Task` of the request (the harness session the executor runs as), if any. */
  task: string | null;
  /** The provider that answered (or the last one tried). */
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** How many providers failed before this one answered. */
  failovers: number;
  /** Whether a provider answered successfully. */
  ok: boolean;
}

/** Where the gateway reports each record. */
export type UsageReport = (record: UsageRecord) => void;

/** Reports the request's record: once, by the job that ended it (a whole answer, a stream, or none). */
export function reportUsage(flow: Flow, entry: ChainEntry, usage: Tokens | null, ok: boolean): void {
  try {
    flow.context.report({
      task: flow.chat.task,
      provider: entry.provider,
      model: entry.model,
      prompt_tokens: usage?.prompt_tokens ?? 0,
      completion_tokens: usage?.completion_tokens ?? 0,
      failovers: flow.failovers.length,
      ok,
    });
  } catch (error) {
    // A broken counter must not break the answer.
    log.error(`gateway: the usage report failed: ${errorMessage(error)}`);
  }
}
