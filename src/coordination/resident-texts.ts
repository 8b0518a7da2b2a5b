/**
 * The newest messages whole, within a budget of bytes: what answers most reads without touching
 * the journal. The oldest leaves first, so what is held is always the newest stretch of the
 * history (slots `oldest` … the last), and a message that left never comes back.
 *
 * A message costs the UTF-8 bytes of its subject and body twice (the text, and the accent- and
 * case-folded copy search compares, made when first searched) plus a fixed share for its other
 * fields and its place here: a flood of one-character messages is bounded as well as one of long
 * ones.
 */
import type { StoredMessage } from './messages.js';
import { searchText } from './search-text.js';

/** What a held message costs besides its text: its other fields, its entry here (measured ≈ 300 B). */
export const RESIDENT_OVERHEAD_BYTES = 320;

interface Held {
  message: StoredMessage;
  bytes: number;
  folded: string | null;
}

export function residentCost(message: Pick<StoredMessage, 'subject' | 'body'>): number {
  return 2 * (Buffer.byteLength(message.subject ?? '') + Buffer.byteLength(message.body)) + RESIDENT_OVERHEAD_BYTES;
}

export class ResidentTexts {
  readonly #budget: number;
  /** By slot, oldest first (a Map keeps insertion order). */
  readonly #held = new Map<number, Held>();
  #bytes = 0;

  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  /** Holds the message of `slot` (the newest) and lets the oldest go until the budget is kept; answers the slots let go, oldest first. */
  hold(slot: number, message: StoredMessage): number[] {
    const bytes = residentCost(message);
    this.#held.set(slot, { message, bytes, folded: null });
    this.#bytes += bytes;
    const gone: number[] = [];
    for (const [oldest, held] of this.#held) {
      if (this.#bytes <= this.#budget) break;
      this.#held.delete(oldest);
      this.#bytes -= held.bytes;
      gone.push(oldest);
    }
    return gone;
  }

  get(slot: number): StoredMessage | undefined {
    return this.#held.get(slot)?.message;
  }

  has(slot: number): boolean {
    return this.#held.has(slot);
  }

  /** The folded text search compares (made once, already counted in the cost). */
  searchText(slot: number): string | undefined {
    const held = this.#held.get(slot);
    if (!held) return undefined;
    held.folded ??= searchText(held.message);
    return held.folded;
  }

  /** The oldest slot held; null when none is. */
  get oldest(): number | null {
    for (const slot of this.#held.keys()) return slot;
    return null;
  }

  get count(): number {
    return this.#held.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
