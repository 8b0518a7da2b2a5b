/**
 * Where every message of the history is, without its text: its number, its thread and its line in
 * the journal, a message's `slot` being its place in that order (oldest 0). It is what lets the
 * text leave memory (resident-texts.ts) while threads, inboxes and acknowledgements stay exact.
 *
 * A few numbers a message, in columns of plain arrays (V8 keeps arrays of small integers packed,
 * 8 bytes an element), not an object a message: measured with its inbox entry, about 60 bytes a
 * message however long its text.
 * A message that started its own thread (most do) costs no string; a thread name is kept once,
 * however many messages it has.
 */
import type { JournalLine } from './journal.js';

/** The thread column's value for a message whose thread is its own id. */
const OWN_THREAD = -1;
/** The offset column's value for a message with no line in the journal (none, or it failed). */
const NO_LINE = -1;

/** `m12` → 12; null for anything this server would not have named a message. */
export function messageNumber(id: string): number | null {
  return /^m[1-9]\d{0,14}$/.test(id) ? Number(id.slice(1)) : null;
}

export class MessageIndex {
  /** Message numbers (m12 → 12), increasing with the slot: a lookup by id is a binary search. */
  readonly #numbers: number[] = [];
  readonly #offsets: number[] = [];
  readonly #lengths: number[] = [];
  /** OWN_THREAD, or the code #threadCodes gives the thread's name. */
  readonly #threads: number[] = [];
  readonly #threadCodes = new Map<string, number>();

  get size(): number {
    return this.#numbers.length;
  }

  /** The number the next message may have: one past the last. */
  get nextNumber(): number {
    return (this.#numbers.at(-1) ?? 0) + 1;
  }

  /**
   * Files the next message and answers its slot; null when its id is not `m<n>` with `n` past the
   * last one's (an edit by hand, or two writers): the order is what makes a lookup cheap.
   */
  add(id: string, thread: string, line: JournalLine | null): number | null {
    const number = messageNumber(id);
    if (number === null || number < this.nextNumber) return null;
    this.#numbers.push(number);
    this.#offsets.push(line?.offset ?? NO_LINE);
    this.#lengths.push(line?.length ?? 0);
    this.#threads.push(thread === id ? OWN_THREAD : this.#threadCode(thread));
    return this.#numbers.length - 1;
  }

  /** The slot of message `id`, or null when there is none. */
  slotOf(id: string): number | null {
    const number = messageNumber(id);
    if (number === null) return null;
    let low = 0;
    let high = this.#numbers.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = this.#numbers[middle] as number;
      if (at === number) return middle;
      if (at < number) low = middle + 1;
      else high = middle - 1;
    }
    return null;
  }

  idAt(slot: number): string {
    return `m${this.#numbers[slot] as number}`;
  }

  /** Where the message's line is in the journal; null when it has none. */
  lineAt(slot: number): JournalLine | null {
    const offset = this.#offsets[slot] ?? NO_LINE;
    return offset === NO_LINE ? null : { offset, length: this.#lengths[slot] as number };
  }

  /** The slots of a thread's messages, oldest first; empty when no message belongs to it. */
  thread(name: string): number[] {
    const slots: number[] = [];
    const code = this.#threadCodes.get(name);
    if (code !== undefined) {
      for (let slot = 0; slot < this.#threads.length; slot += 1) if (this.#threads[slot] === code) slots.push(slot);
    }
    const first = this.slotOf(name);
    if (first !== null && this.#threads[first] === OWN_THREAD) {
      // Its first message, wherever it falls (a name may be used before a message gets that id).
      const at = slots.findIndex((slot) => slot > first);
      slots.splice(at === -1 ? slots.length : at, 0, first);
    }
    return slots;
  }

  #threadCode(name: string): number {
    let code = this.#threadCodes.get(name);
    if (code === undefined) {
      code = this.#threadCodes.size;
      this.#threadCodes.set(name, code);
    }
    return code;
  }
}
