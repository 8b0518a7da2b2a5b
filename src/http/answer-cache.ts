/**
 * Answers of pure queries, remembered by the HTTP thread. A query that reads only the registry or
 * the layer (and is not `volatile`: the git guard's status reads the hooks directory) is a pure
 * function of the snapshot, and a snapshot never changes: a reload brings a new generation with a
 * new snapshot, and the dispatcher then drops this cache for a new one (`CallDispatcher.useSnapshot`).
 * So the answer the pool computed for an input is the answer for that input while its generation
 * serves. Each distinct call runs in the pool once: identical calls arriving while it runs wait for
 * the same answer.
 *
 * Bounded by entry count and by total size (characters of JSON text); an answer over
 * `maxAnswerChars` is not kept, and the least recently used go first.
 */
import type { CallOutcome } from '../platform/call.js';

export interface AnswerCacheOptions {
  maxEntries: number;
  maxAnswerChars: number;
  maxTotalChars: number;
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

function sizeOf(outcome: CallOutcome): number {
  return outcome.ok ? outcome.json.length : outcome.message.length;
}

/** `busy` and `internal` say nothing about the input: never remember them. */
function rememberable(outcome: CallOutcome): boolean {
  return outcome.ok || (outcome.code !== 'busy' && outcome.code !== 'internal');
}

export class AnswerCache {
  readonly #known = new Map<string, CallOutcome>();
  readonly #running = new Map<string, Promise<CallOutcome>>();
  readonly #options: AnswerCacheOptions;
  #totalChars = 0;
  #hits = 0;
  #misses = 0;

  constructor(options: AnswerCacheOptions) {
    this.#options = options;
  }

  get stats(): { entries: number; hits: number; misses: number; chars: number } {
    return { entries: this.#known.size, hits: this.#hits, misses: this.#misses, chars: this.#totalChars };
  }

  /** The remembered answer, the one being computed, or a new computation. */
  answer(capabilityId: string, input: unknown, compute: () => Promise<CallOutcome>): Promise<CallOutcome> {
    const key = `${capabilityId} ${canonicalJson(input)}`;
    const known = this.#known.get(key);
    if (known !== undefined) {
      this.#hits += 1;
      // Map order is recency order: move the hit to the end.
      this.#known.delete(key);
      this.#known.set(key, known);
      return Promise.resolve(known);
    }
    const running = this.#running.get(key);
    if (running !== undefined) {
      this.#hits += 1;
      return running;
    }
    this.#misses += 1;
    const computing = compute().then((outcome) => {
      this.#running.delete(key);
      this.#remember(key, outcome);
      return outcome;
    });
    this.#running.set(key, computing);
    return computing;
  }

  #remember(key: string, outcome: CallOutcome): void {
    const size = sizeOf(outcome);
    if (!rememberable(outcome) || size > this.#options.maxAnswerChars) return;
    this.#known.set(key, outcome);
    this.#totalChars += size;
    for (const [oldest, entry] of this.#known) {
      if (this.#known.size <= this.#options.maxEntries && this.#totalChars <= this.#options.maxTotalChars) break;
      this.#known.delete(oldest);
      this.#totalChars -= sizeOf(entry);
    }
  }
}
