/**
 * The loop guard: a model that repeats itself is stopped (state `loop`) instead of spending turns
 * until `max_turns`. The same tool call — name and arguments, compared as parsed JSON, so key order
 * and spacing do not hide a repeat — four times in a row, or the same text five times in a row.
 */

export const SAME_CALL_LIMIT = 4;
export const SAME_TEXT_LIMIT = 5;

export class LoopGuard {
  readonly #callLimit: number;
  readonly #textLimit: number;
  #lastCall: string | null = null;
  #callRepeats = 0;
  #lastText: string | null = null;
  #textRepeats = 0;

  constructor(limits: { calls?: number; texts?: number } = {}) {
    this.#callLimit = limits.calls ?? SAME_CALL_LIMIT;
    this.#textLimit = limits.texts ?? SAME_TEXT_LIMIT;
  }

  /** Notes one tool call; the reason to stop when it is the limit-th identical call in a row. */
  noteCall(name: string, args: string): string | null {
    const key = `${name}\u0000${canonicalArguments(args)}`;
    this.#callRepeats = key === this.#lastCall ? this.#callRepeats + 1 : 1;
    this.#lastCall = key;
    if (this.#callRepeats < this.#callLimit) return null;
    return `the model called ${name} with the same arguments ${this.#callRepeats} times in a row`;
  }

  /** Notes one assistant text (empty texts are not counted); the reason to stop, or null. */
  noteText(text: string): string | null {
    const key = text.trim();
    if (key === '') return null;
    this.#textRepeats = key === this.#lastText ? this.#textRepeats + 1 : 1;
    this.#lastText = key;
    if (this.#textRepeats < this.#textLimit) return null;
    return `the model wrote the same text ${this.#textRepeats} times in a row`;
  }
}

/** The arguments as canonical JSON (keys sorted at every level), or the raw text when not JSON. */
export function canonicalArguments(args: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(args)));
  } catch {
    return args.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, sortKeys(record[key])]));
}
