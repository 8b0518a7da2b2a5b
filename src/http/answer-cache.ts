/**
 * Answers of pure queries, remembered by the HTTP thread. A query that reads only the registry or
 * the layer is a pure function of the snapshot, and the snapshot never changes while the server
 * lives (restart-based rediscovery, ADR 2/3); so the answer the pool computed for an input is the
 * answer for that input until the process ends. Each distinct call still runs in the pool once.
 *
 * Bounded by entry count and by size: answers over `maxAnswerBytes` are not kept.
 */
import type { CallOutcome } from '../../workers/types.js';

export interface AnswerCacheOptions {
  maxEntries: number;
  maxAnswerBytes: number;
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are one input. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export class AnswerCache {
  readonly #entries = new Map<string, CallOutcome>();
  readonly #options: AnswerCacheOptions;
  #hits = 0;
  #misses = 0;

  constructor(options: AnswerCacheOptions) {
    this.#options = options;
  }

  get stats(): { entries: number; hits: number; misses: number } {
    return { entries: this.#entries.size, hits: this.#hits, misses: this.#misses };
  }

  /** The remembered answer, or the computed one (remembered when small enough). */
  async answer(capabilityId: string, input: unknown, compute: () => Promise<CallOutcome>): Promise<CallOutcome> {
    const key = `${capabilityId} ${canonicalJson(input)}`;
    const known = this.#entries.get(key);
    if (known !== undefined) {
      this.#hits += 1;
      // Map order is recency order: move the hit to the end.
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known;
    }
    this.#misses += 1;
    const outcome = await compute();
    // `busy` and `internal` say nothing about the input: never remember them.
    const remember = outcome.ok || (outcome.code !== 'busy' && outcome.code !== 'internal');
    const size = outcome.ok ? outcome.json.length : outcome.message.length;
    if (remember && size <= this.#options.maxAnswerBytes) {
      this.#entries.set(key, outcome);
      if (this.#entries.size > this.#options.maxEntries) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
    }
    return outcome;
  }
}
