/**
 * Messages between peers (and the overseer): each belongs to a thread, names its recipients and
 * sits in their inboxes until they acknowledge it. Any peer may read any thread — a late joiner
 * reads the history; who is addressed decides who is told and whose inbox holds it.
 *
 * Inboxes belong to the server's lineage (its epoch): peer ids start again at p1 after a clean
 * restart, so yesterday's p2 never finds its messages in today's p2's inbox. Threads and search
 * span every epoch the journal holds.
 */
import { CapabilityError } from '../platform/errors.js';
import type { PeerClient } from '../peers/schema.js';
import type { Message } from './schemas.js';

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
  record?: (event: MessageEvent) => void;
  now?: () => number;
  /** The most messages held in memory (older ones stay in the journal only). */
  maxKept?: number;
}

interface Kept extends StoredMessage {
  folded: string;
}

const DEFAULT_MAX_KEPT = 20_000;

/** Lower case without accents: `Žluťoučký` → `zlutoucky`. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
}

function messageNumber(id: string): number {
  return /^m(\d+)$/.test(id) ? Number(id.slice(1)) : 0;
}

export class MessageBoard {
  readonly #epoch: string;
  readonly #record: (event: MessageEvent) => void;
  readonly #now: () => number;
  readonly #maxKept: number;
  /** Oldest first. */
  #messages: Kept[] = [];
  readonly #byId = new Map<string, Kept>();
  readonly #threads = new Map<string, Kept[]>();
  /** Acknowledged message ids, by reader (this epoch only). */
  readonly #acks = new Map<string, Set<string>>();
  #next = 1;

  constructor(options: MessageBoardOptions) {
    this.#epoch = options.epoch;
    this.#record = options.record ?? (() => undefined);
    this.#now = options.now ?? Date.now;
    this.#maxKept = options.maxKept ?? DEFAULT_MAX_KEPT;
  }

  /** Puts back a journalled message. */
  restore(message: StoredMessage): void {
    this.#next = Math.max(this.#next, messageNumber(message.id) + 1);
    this.#keep(message);
  }

  /** Puts back a journalled acknowledgement (of this epoch). */
  restoreAck(peer: string, ids: readonly string[]): void {
    const acked = this.#acks.get(peer) ?? new Set<string>();
    for (const id of ids) acked.add(id);
    this.#acks.set(peer, acked);
  }

  send(outgoing: Outgoing): Message {
    const id = `m${this.#next++}`;
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
    this.#keep(stored);
    this.#record({ event: 'message', message: stored });
    return view(stored);
  }

  /** The reader's messages of this epoch, oldest first: the latest `limit`, or the unread ones. */
  inbox(reader: string, options: { unread: boolean; limit: number }): { unread: number; messages: Message[] } {
    const acked = this.#acks.get(reader);
    const mine = this.#messages.filter((m) => m.epoch === this.#epoch && m.recipients.includes(reader));
    const unread = mine.filter((m) => !acked?.has(m.id));
    const shown = (options.unread ? unread : mine).slice(-options.limit);
    return { unread: unread.length, messages: shown.map((m) => ({ ...view(m), acknowledged: acked?.has(m.id) ?? false })) };
  }

  /** Marks messages read by `reader`; each must be addressed to it. */
  ack(reader: string, ids: readonly string[]): string[] {
    const messages = ids.map((id) => this.#byId.get(id) ?? notFound(id));
    const foreign = messages.find((m) => m.epoch !== this.#epoch || !m.recipients.includes(reader));
    if (foreign) throw new CapabilityError('refused', `message ${foreign.id} is not in your inbox (it was sent to ${foreign.to.join(', ')})`);
    const unique = [...new Set(ids)];
    this.restoreAck(reader, unique);
    this.#record({ event: 'ack', peer: reader, ids: unique });
    return unique;
  }

  /** A thread's messages, oldest first (the latest `limit`). */
  thread(thread: string, limit: number): Message[] {
    const messages = this.#threads.get(thread);
    if (!messages) throw new CapabilityError('not_found', `no thread ${JSON.stringify(thread)}: a thread is named by its first message's id or by the name it was started with`);
    return messages.slice(-limit).map(view);
  }

  /** Messages whose subject or body holds every term, ignoring case and accents; newest first. */
  search(query: string, limit: number): Message[] {
    const terms = fold(query).split(/\s+/).filter(Boolean);
    const found: Message[] = [];
    for (let i = this.#messages.length - 1; i >= 0 && found.length < limit; i -= 1) {
      const message = this.#messages[i] as Kept;
      if (terms.every((term) => message.folded.includes(term))) found.push(view(message));
    }
    return found;
  }

  /** The latest `limit` messages of every thread, oldest first (the page's view). */
  recent(limit: number): Message[] {
    return this.#messages.slice(-limit).map(view);
  }

  has(thread: string): boolean {
    return this.#threads.has(thread);
  }

  get size(): number {
    return this.#messages.length;
  }

  #keep(message: StoredMessage): void {
    const kept: Kept = { ...message, folded: fold(`${message.subject ?? ''}\n${message.body}`) };
    this.#messages.push(kept);
    this.#byId.set(kept.id, kept);
    const thread = this.#threads.get(kept.thread);
    if (thread) thread.push(kept);
    else this.#threads.set(kept.thread, [kept]);
    if (this.#messages.length > this.#maxKept) this.#forget(this.#messages.length - this.#maxKept);
  }

  #forget(count: number): void {
    const gone = this.#messages.slice(0, count);
    this.#messages = this.#messages.slice(count);
    for (const message of gone) {
      this.#byId.delete(message.id);
      const thread = this.#threads.get(message.thread);
      if (!thread) continue;
      const left = thread.filter((m) => m !== message);
      if (left.length === 0) this.#threads.delete(message.thread);
      else this.#threads.set(message.thread, left);
    }
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

function notFound(id: string): never {
  throw new CapabilityError('not_found', `no message ${id}`);
}
