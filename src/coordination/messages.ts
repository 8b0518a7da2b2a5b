/**
 * Messages between peers (and the overseer): each belongs to a thread, names its recipients and
 * sits in their inboxes until they acknowledge it. Any peer may read any thread — a late joiner
 * reads the history; who is addressed decides who is told and whose inbox holds it.
 *
 * Inboxes belong to the server's lineage (its epoch): peer ids start again at p1 after a clean
 * restart, so yesterday's p2 never finds its messages in today's p2's inbox. Threads and search
 * span every epoch the journal holds.
 *
 * Memory is bounded by the text it holds, not by a count: the newest messages are held whole
 * within a budget of bytes (resident-texts.ts); every message, however old, keeps a few numbers in
 * the index (message-index.ts) and the inboxes (inboxes.ts), and its text is read back from its
 * line in the journal when asked for. A read by id (a thread, an inbox, the page's latest) reads at
 * most its `limit` of lines, at once; a search, which may have to look at every message, reads
 * the journal in batches off the thread, newest first, and stops when it has found enough.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CapabilityError } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { PeerClient } from '../peers/schema.js';
import { Inboxes } from './inboxes.js';
import type { JournalEntry, JournalLine, JournalReader } from './journal.js';
import { MessageIndex } from './message-index.js';
import { ResidentTexts } from './resident-texts.js';
import type { Message } from './schemas.js';
import { matchesAll, searchTerms, searchText } from './search-text.js';

/** A message as the journal keeps it. */
export interface StoredMessage {
  id: string;
  thread: string;
  from: string;
  from_client?: PeerClient;
  /** As the sender wrote it (peer ids, the overseer, or "all"). */
  to: string[];
  /** Who it reached: `to` with "all" resolved to the peers attached when it was sent. */
  recipients: string[];
  subject?: string;
  body: string;
  at: string;
  epoch: string;
}

export type MessageEvent = { event: 'message'; message: StoredMessage } | { event: 'ack'; peer: string; ids: string[] };

export interface Outgoing {
  from: string;
  from_client?: PeerClient;
  to: string[];
  recipients: string[];
  subject?: string;
  body: string;
  thread?: string;
}

export interface MessageBoardOptions {
  epoch: string;
  /** Journals an event; answers where a message's line went (null: it has none, and leaves memory for good). */
  record?: (event: MessageEvent) => JournalLine | null;
  /** Where messages out of memory are read back from; without one they are forgotten when they leave it. */
  journal?: JournalReader | null;
  now?: () => number;
  /** The bytes of text held in memory (resident-texts.ts says how a message is counted). */
  memoryBytes: number;
}

/**
 * The most a search works between two turns of the event loop: what it reads back from the
 * journal is parsed and folded on the owner's main thread (a span of long accented texts takes
 * tens of ms), so it yields by time, not by bytes.
 */
const SEARCH_SLICE_MS = 4;

export class MessageBoard {
  readonly #epoch: string;
  readonly #record: (event: MessageEvent) => JournalLine | null;
  readonly #journal: JournalReader | null;
  readonly #now: () => number;
  readonly #index = new MessageIndex();
  readonly #resident: ResidentTexts;
  readonly #inboxes = new Inboxes();
  #warnedMoved = false;

  constructor(options: MessageBoardOptions) {
    this.#epoch = options.epoch;
    this.#record = options.record ?? (() => null);
    this.#journal = options.journal ?? null;
    this.#now = options.now ?? Date.now;
    this.#resident = new ResidentTexts(options.memoryBytes);
  }

  /** Puts back a journalled message found on `line`; false when it cannot be filed (its id is out of order). */
  restore(message: StoredMessage, line: JournalLine | null): boolean {
    return this.#file(message, line);
  }

  /** Puts back a journalled acknowledgement (of this epoch). */
  restoreAck(peer: string, ids: readonly string[]): void {
    for (const id of ids) {
      const slot = this.#index.slotOf(id);
      if (slot !== null) this.#inboxes.acknowledge(peer, slot);
    }
  }

  send(outgoing: Outgoing): Message {
    const id = `m${this.#index.nextNumber}`;
    const stored: StoredMessage = {
      id,
      thread: outgoing.thread ?? id,
      from: outgoing.from,
      ...(outgoing.from_client ? { from_client: { ...outgoing.from_client } } : {}),
      to: [...outgoing.to],
      recipients: [...outgoing.recipients],
      ...(outgoing.subject === undefined || outgoing.subject.trim() === '' ? {} : { subject: outgoing.subject.trim() }),
      body: outgoing.body,
      at: new Date(this.#now()).toISOString(),
      epoch: this.#epoch,
    };
    this.#file(stored, this.#record({ event: 'message', message: stored }));
    return view(stored);
  }

  /** The reader's messages of this epoch, oldest first: the latest `limit`, or the unread ones. */
  inbox(reader: string, options: { unread: boolean; limit: number }): { unread: number; messages: Message[] } {
    const entries = this.#inboxes.latest(reader, options);
    const read = this.#read(entries.map((entry) => entry.slot));
    const messages: Message[] = [];
    entries.forEach((entry, at) => {
      const message = read[at];
      if (message) messages.push({ ...view(message), acknowledged: entry.acknowledged });
    });
    return { unread: this.#inboxes.unread(reader), messages };
  }

  /** Marks messages read by `reader`; each must be addressed to it. */
  ack(reader: string, ids: readonly string[]): string[] {
    const slots = ids.map((id) => this.#visibleSlot(id) ?? notFound(id));
    const foreign = slots.find((slot) => !this.#inboxes.holds(reader, slot));
    if (foreign !== undefined) {
      const to = this.#read([foreign])[0]?.to.join(', ') ?? 'others';
      throw new CapabilityError('refused', `message ${this.#index.idAt(foreign)} is not in your inbox (it was sent to ${to})`);
    }
    const unique = [...new Set(ids)];
    for (const slot of slots) this.#inboxes.acknowledge(reader, slot);
    this.#record({ event: 'ack', peer: reader, ids: unique });
    return unique;
  }

  /** A thread's messages, oldest first (the latest `limit`). */
  thread(thread: string, limit: number): Message[] {
    const slots = this.#index.thread(thread).filter((slot) => this.#visible(slot));
    if (slots.length === 0) throw new CapabilityError('not_found', `no thread ${JSON.stringify(thread)}: a thread is named by its first message's id or by the name it was started with`);
    return this.#read(slots.slice(-limit)).filter(isMessage).map(view);
  }

  /**
   * Messages whose subject or body holds every term, ignoring case and accents; newest first.
   * What memory holds is searched at once; older messages are read back from the journal in
   * batches, each read off the thread and looked through in slices of a few ms, until `limit` are
   * found, the history ends or `signal` aborts.
   */
  async search(query: string, limit: number, signal?: AbortSignal): Promise<Message[]> {
    const terms = searchTerms(query);
    const found: Message[] = [];
    // Taken now: what leaves memory while the journal is read is at or past this slot, searched here.
    const firstHeld = this.#resident.oldest ?? this.#index.size;
    for (let slot = this.#index.size - 1; slot >= firstHeld && found.length < limit; slot -= 1) {
      const text = this.#resident.searchText(slot);
      const message = this.#resident.get(slot);
      if (text !== undefined && message && matchesAll(text, terms)) found.push(view(message));
    }
    if (found.length >= limit || this.#journal === null || firstHeld === 0) return found;
    let sliceStart = performance.now();
    for await (const batch of this.#journal.read(this.#linesBefore(firstHeld))) {
      for (const [{ slot }, entry] of batch) {
        const message = this.#messageIn(entry, slot);
        if (message && matchesAll(searchText(message), terms)) found.push(view(message));
        if (found.length >= limit) return found;
        if (performance.now() - sliceStart >= SEARCH_SLICE_MS) {
          await nextTurn();
          if (signal?.aborted) return found;
          sliceStart = performance.now();
        }
      }
      if (signal?.aborted) break;
    }
    return found;
  }

  /** The latest `limit` messages of every thread, oldest first (the page's view). */
  recent(limit: number): Message[] {
    const slots: number[] = [];
    for (let slot = this.#index.size - 1; slot >= 0 && slots.length < limit; slot -= 1) if (this.#visible(slot)) slots.push(slot);
    return this.#read(slots.reverse()).filter(isMessage).map(view);
  }

  /** What memory holds: messages held whole and the bytes they count for, and every message's place in the index. */
  get memory(): { held: number; heldBytes: number; indexed: number } {
    return { held: this.#resident.count, heldBytes: this.#resident.bytes, indexed: this.#index.size };
  }

  #file(message: StoredMessage, line: JournalLine | null): boolean {
    const slot = this.#index.add(message.id, message.thread, line);
    if (slot === null) return false;
    if (message.epoch === this.#epoch) this.#inboxes.deliver(slot, message.recipients);
    for (const gone of this.#resident.hold(slot, message)) {
      // Without a line to read it back from, a message that leaves memory is gone: out of every inbox too.
      if (this.#journal === null || this.#index.lineAt(gone) === null) this.#inboxes.forget(gone);
    }
    return true;
  }

  /** Whether a message can still be read: held, or on a line of the journal. */
  #visible(slot: number): boolean {
    return this.#resident.has(slot) || (this.#journal !== null && this.#index.lineAt(slot) !== null);
  }

  #visibleSlot(id: string): number | null {
    const slot = this.#index.slotOf(id);
    return slot !== null && this.#visible(slot) ? slot : null;
  }

  /** The messages of `slots`, in order: from memory, or read back from the journal at once (null: its line is gone). */
  #read(slots: readonly number[]): Array<StoredMessage | null> {
    const messages = slots.map((slot) => this.#resident.get(slot) ?? null);
    const missing = slots.flatMap((slot, at) => {
      const line = messages[at] === null ? this.#index.lineAt(slot) : null;
      return line === null ? [] : [{ at, slot, line }];
    });
    if (missing.length === 0 || this.#journal === null) return messages;
    const entries = this.#journal.readSync(missing.map((m) => m.line));
    missing.forEach(({ at, slot }, i) => {
      messages[at] = this.#messageIn(entries[i] ?? null, slot);
    });
    return messages;
  }

  /** The journal lines of the messages before `slot`, newest first, walked as they are read. */
  *#linesBefore(slot: number): Generator<{ slot: number; line: JournalLine }> {
    for (let at = slot - 1; at >= 0; at -= 1) {
      const line = this.#index.lineAt(at);
      if (line !== null) yield { slot: at, line };
    }
  }

  /** The message a journal entry holds, if it is the one filed at `slot`. */
  #messageIn(entry: JournalEntry | null, slot: number): StoredMessage | null {
    const message = entry?.event === 'message' ? (entry.message as StoredMessage | undefined) : undefined;
    if (message && message.id === this.#index.idAt(slot) && typeof message.body === 'string' && Array.isArray(message.to)) return message;
    if (!this.#warnedMoved) {
      // The file was moved, cut or edited while the server ran: what it no longer holds is gone.
      this.#warnedMoved = true;
      log.warn(`message ${this.#index.idAt(slot)} is no longer where the journal had it; messages out of memory may be missing`);
    }
    return null;
  }
}

function view(message: StoredMessage): Message {
  return {
    id: message.id,
    thread: message.thread,
    from: message.from,
    ...(message.from_client ? { from_client: { ...message.from_client } } : {}),
    to: [...message.to],
    ...(message.subject === undefined ? {} : { subject: message.subject }),
    body: message.body,
    at: message.at,
  };
}

function isMessage(message: StoredMessage | null): message is StoredMessage {
  return message !== null;
}

function notFound(id: string): never {
  throw new CapabilityError('not_found', `no message ${id}`);
}
