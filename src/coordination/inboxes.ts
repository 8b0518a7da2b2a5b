/**
 * This lineage's inboxes: for each reader, the slots (message-index.ts) of the messages addressed
 * to it, which of them it acknowledged, and how many it has not. Numbers only — whether a
 * message's text is in memory or only in the journal changes nothing here, so the unread count
 * and acknowledgements stay exact for messages long out of memory.
 */

interface Inbox {
  /** Increasing: messages arrive in slot order. */
  slots: number[];
  acknowledged: boolean[];
  unread: number;
}

export interface InboxEntry {
  slot: number;
  acknowledged: boolean;
}

export class Inboxes {
  readonly #byReader = new Map<string, Inbox>();

  /** Files the message of `slot` (the newest so far) in each reader's inbox. */
  deliver(slot: number, readers: readonly string[]): void {
    for (const reader of new Set(readers)) {
      let inbox = this.#byReader.get(reader);
      if (!inbox) {
        inbox = { slots: [], acknowledged: [], unread: 0 };
        this.#byReader.set(reader, inbox);
      }
      inbox.slots.push(slot);
      inbox.acknowledged.push(false);
      inbox.unread += 1;
    }
  }

  holds(reader: string, slot: number): boolean {
    const inbox = this.#byReader.get(reader);
    return inbox !== undefined && indexOf(inbox.slots, slot) !== -1;
  }

  /** Marks the message read by `reader`; nothing when it is not in that inbox or already read. */
  acknowledge(reader: string, slot: number): void {
    const inbox = this.#byReader.get(reader);
    const at = inbox ? indexOf(inbox.slots, slot) : -1;
    if (!inbox || at === -1 || inbox.acknowledged[at]) return;
    inbox.acknowledged[at] = true;
    inbox.unread -= 1;
  }

  /** Takes a message out of every inbox: it is gone (it left memory with no journal to read it from). */
  forget(slot: number): void {
    for (const inbox of this.#byReader.values()) {
      const at = indexOf(inbox.slots, slot);
      if (at === -1) continue;
      if (!inbox.acknowledged[at]) inbox.unread -= 1;
      inbox.slots.splice(at, 1);
      inbox.acknowledged.splice(at, 1);
    }
  }

  unread(reader: string): number {
    return this.#byReader.get(reader)?.unread ?? 0;
  }

  /** The reader's latest `limit` messages (only the unacknowledged ones when `unread`), oldest first. */
  latest(reader: string, options: { unread: boolean; limit: number }): InboxEntry[] {
    const inbox = this.#byReader.get(reader);
    if (!inbox) return [];
    const entries: InboxEntry[] = [];
    for (let at = inbox.slots.length - 1; at >= 0 && entries.length < options.limit; at -= 1) {
      const acknowledged = inbox.acknowledged[at] as boolean;
      if (options.unread && acknowledged) continue;
      entries.push({ slot: inbox.slots[at] as number, acknowledged });
    }
    return entries.reverse();
  }
}

function indexOf(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = sorted[middle] as number;
    if (at === value) return middle;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
