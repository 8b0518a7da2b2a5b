/**
 * Coordination between the peers of a checkout: the claim board and the messages, over the peer
 * board, with their journal and the notices that tell peers live. It lives where the peer board
 * lives (the owner's main thread); its capabilities read `peers`.
 */
import { join } from 'node:path';
import { CapabilityError } from '../platform/errors.js';
import type { PeerBoard } from '../peers/board.js';
import type { PeerClient } from '../peers/schema.js';
import type { PeerNotice } from '../peers/notice.js';
import { ClaimBoard, type ClaimEvent, type ClaimRequest, type Granted, type StoredClaim } from './claims.js';
import { Journal, readJournal, scanJournal, type JournalEntry, type JournalLine } from './journal.js';
import { MessageBoard, type MessageEvent, type StoredMessage } from './messages.js';
import { claimNotice, messageNotice } from './notices.js';
import { RateLimiter, type RateLimit } from './rate-limit.js';
import { sessionOf } from '../platform/proc.js';
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import { EVERYONE, OVERSEER, type CheckAnswer, type CheckView, type Claim, type Message, type Overlap } from './schemas.js';

/** What coordination capabilities may do. `caller` is a peer id, or null for the overseer. */
export interface CoordinationAccess {
  claim(caller: string | null, request: ClaimRequest): Granted;
  renew(caller: string | null, ids: readonly string[] | undefined, ttlSeconds: number): Claim[];
  release(caller: string | null, ids: readonly string[] | undefined): string[];
  releaseStale(caller: string | null, ids: readonly string[]): string[];
  claims(): Claim[];
  check(paths: readonly string[], view: CheckView): Omit<CheckAnswer, 'you'>;
  /** Who asks, for a caller without an MCP session: a peer id named outright, or found by process. */
  identify(as: string | undefined, pids: readonly number[] | undefined): string | null;
  send(caller: string | null, input: { to: string[]; body: string; subject?: string; thread?: string }): { message: Message; delivered: string[] };
  inbox(caller: string | null, options: { unread: boolean; limit: number }): { you: string; unread: number; messages: Message[] };
  ack(caller: string | null, ids: readonly string[]): string[];
  thread(thread: string, limit: number): Message[];
  search(query: string, limit: number, signal?: AbortSignal): Promise<Message[]>;
}

/** How much of the messages memory holds, and how fast one sender may send. */
export interface MessageLimits {
  /** The bytes of text held in memory; older messages are read back from the journal. */
  memoryBytes: number;
  /** Per sender (a peer, or the overseer). */
  rate: RateLimit;
}

/** The limits the environment sets (`MAJORDOMUS_MESSAGE_MEMORY_BYTES`, `_RATE`, `_BURST`). */
export function messageLimitsFromSettings(): MessageLimits {
  const { messageMemoryBytes, messageRate, messageBurst } = settings();
  return { memoryBytes: messageMemoryBytes, rate: { perSecond: messageRate, burst: messageBurst } };
}

export interface CoordinationOptions {
  /** The checkout's real path. */
  root: string;
  board: PeerBoard;
  /** The server lineage: a fresh server starts a new one, a successor after a takeover keeps it. */
  epoch: string;
  /** `<local>/coordination`, where the journals live; null keeps nothing (a client served alone). */
  journalDir: string | null;
  notify?: (notice: PeerNotice) => void;
  /** Called after any claim or message event (the live page builds its view again). */
  onChange?: () => void;
  now?: () => number;
  /** Default: the environment's (`messageLimitsFromSettings`). */
  messageLimits?: MessageLimits;
}

const EXPIRY_SWEEP_MS = 5_000;

export class Coordination implements CoordinationAccess {
  readonly #board: PeerBoard;
  readonly #claims: ClaimBoard;
  readonly #messages: MessageBoard;
  readonly #sendRates: RateLimiter;
  readonly #claimJournal: Journal | null;
  readonly #messageJournal: Journal | null;
  readonly #notify: (notice: PeerNotice) => void;
  readonly #onChange: () => void;
  readonly #now: () => number;
  readonly #epoch: string;
  #sweep: NodeJS.Timeout | null = null;
  /** Closed: the journal is complete for a successor, and nothing more is written to it. */
  #closed = false;

  /** Opens the journals and restores what this lineage left in them. */
  static async open(options: CoordinationOptions): Promise<Coordination> {
    const coordination = new Coordination(options);
    if (options.journalDir !== null) {
      // The messages' journal is read line by line, as it may be long; only the index and the newest texts stay.
      let unfiled = 0;
      await Promise.all([
        readJournal(join(options.journalDir, 'claims.jsonl')).then((claims) => coordination.#restoreClaims(claims)),
        scanJournal(join(options.journalDir, 'messages.jsonl'), (entry, line) => {
          if (!coordination.#restoreMessageEvent(entry, line)) unfiled += 1;
        }),
      ]);
      if (unfiled > 0) log.warn(`messages.jsonl: skipped ${unfiled} message(s) that are malformed or whose id is not past the one before`);
    }
    return coordination;
  }

  /**
   * Claims and messages kept in memory only, for a client served alone (nobody else sees them):
   * a message that leaves memory is forgotten.
   */
  static alone(root: string, board: PeerBoard): Coordination {
    return new Coordination({ root, board, epoch: 'alone', journalDir: null });
  }

  private constructor(options: CoordinationOptions) {
    this.#board = options.board;
    this.#epoch = options.epoch;
    this.#now = options.now ?? Date.now;
    this.#notify = options.notify ?? (() => undefined);
    this.#onChange = options.onChange ?? (() => undefined);
    this.#claimJournal = options.journalDir === null ? null : new Journal(join(options.journalDir, 'claims.jsonl'));
    this.#messageJournal = options.journalDir === null ? null : new Journal(join(options.journalDir, 'messages.jsonl'));
    this.#claims = new ClaimBoard({
      root: options.root,
      isLive: (peer) => this.#board.has(peer),
      record: (event) => this.#journal(this.#claimJournal, event),
      now: this.#now,
    });
    const limits = options.messageLimits ?? messageLimitsFromSettings();
    this.#messages = new MessageBoard({
      epoch: options.epoch,
      record: (event) => this.#journal(this.#messageJournal, event),
      journal: this.#messageJournal,
      now: this.#now,
      memoryBytes: limits.memoryBytes,
    });
    this.#sendRates = new RateLimiter(limits.rate, this.#now);
  }

  /** Ends expired claims every few seconds (so the journal says when), until `close`. */
  startExpiring(): void {
    this.#sweep ??= setInterval(() => this.#claims.expire(), EXPIRY_SWEEP_MS);
    this.#sweep.unref();
  }

  /**
   * Stops the sweep and the journal: the sessions this server ends while it stops are not
   * departures (their peers re-attach to the next server), so nothing more is written.
   */
  close(): void {
    this.#closed = true;
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    this.#claimJournal?.close();
    this.#messageJournal?.close();
  }

  /** A peer left the board: its claims end with it. */
  peerLeft(peer: string): void {
    this.#claims.peerLeft(peer);
  }

  claim(caller: string | null, request: ClaimRequest): Granted {
    const peer = this.#peer(caller, 'claiming');
    const granted = this.#claims.claim(peer, this.#clientOf(peer), request);
    for (const overlap of granted.warnings) {
      if (!overlap.live) continue;
      this.#notify(claimNotice(granted.claim, overlap, request.exclusive || overlap.exclusive));
    }
    return granted;
  }

  renew(caller: string | null, ids: readonly string[] | undefined, ttlSeconds: number): Claim[] {
    return this.#claims.renew(this.#peer(caller, 'renewing a claim'), ids, ttlSeconds);
  }

  release(caller: string | null, ids: readonly string[] | undefined): string[] {
    return this.#claims.release(this.#peer(caller, 'releasing a claim'), ids);
  }

  releaseStale(caller: string | null, ids: readonly string[]): string[] {
    return this.#claims.releaseStale(ids, caller ?? OVERSEER);
  }

  claims(): Claim[] {
    return this.#claims.list();
  }

  /** Every claim that overlaps another peer's, with those overlaps (the live page's conflicts). */
  overlapping(): Array<{ claim: Claim; overlaps: Overlap[] }> {
    return this.#claims.overlapping();
  }

  /** The claims covering each path, in the view asked for (src/coordination/schemas.ts, `CheckInputSchema`). */
  check(paths: readonly string[], view: CheckView): Omit<CheckAnswer, 'you'> {
    const checked = this.#claims.check(paths);
    if (view === 'compact') return checked;
    const byId = new Map(checked.claims.map((claim) => [claim.id, claim]));
    return { paths: checked.paths.map((p) => ({ ...p, holders: p.claims.map((id) => byId.get(id) as Claim) })) };
  }

  identify(as: string | undefined, pids: readonly number[] | undefined): string | null {
    if (as !== undefined) return this.#board.has(as) ? as : null;
    const nearest = pids?.[0];
    if (nearest === undefined) return null;
    const session = sessionOf(nearest);
    if (session === null) return null;
    const sameSession = this.#board.list().filter((peer) => this.#board.processOf(peer.id)?.session === session);
    if (sameSession.length <= 1) return sameSession[0]?.id ?? null;
    // Several agents in one terminal session: the one whose own process is an ancestor of the asker.
    const direct = sameSession.filter((peer) => {
      const agent = this.#board.processOf(peer.id)?.chain[0];
      return agent !== undefined && pids?.includes(agent);
    });
    return direct.length === 1 ? (direct[0]?.id ?? null) : null;
  }

  send(caller: string | null, input: { to: string[]; body: string; subject?: string; thread?: string }): { message: Message; delivered: string[] } {
    const from = caller ?? OVERSEER;
    const to = [...new Set(input.to)];
    const recipients = new Set<string>();
    for (const name of to) {
      if (name === EVERYONE) {
        for (const peer of this.#board.list()) if (peer.id !== from) recipients.add(peer.id);
      } else if (name === OVERSEER || this.#board.has(name)) {
        recipients.add(name);
      } else {
        throw new CapabilityError('not_found', `no peer ${JSON.stringify(name)} is attached: send to a peer id from the peer list, "${OVERSEER}" or "${EVERYONE}"`);
      }
    }
    // Counted once the message is sendable: a mistyped recipient costs the sender nothing.
    const admission = this.#sendRates.take(from);
    if (!admission.ok) {
      const { perSecond, burst } = this.#sendRates.limit;
      const why = `${from} sends messages faster than ${perSecond} a second (after a burst of ${burst})`;
      throw new CapabilityError('rate_limited', `${why}: nothing was sent; retry in ${admission.retryAfterMs} ms`, {
        retryAfterMs: admission.retryAfterMs,
      });
    }
    const fromClient = caller === null ? undefined : this.#clientOf(caller);
    const message = this.#messages.send({
      from,
      ...(fromClient ? { from_client: fromClient } : {}),
      to,
      recipients: [...recipients],
      body: input.body,
      ...(input.subject === undefined ? {} : { subject: input.subject }),
      ...(input.thread === undefined ? {} : { thread: input.thread }),
    });
    const delivered = [...recipients].filter((peer) => peer !== OVERSEER && this.#board.has(peer));
    for (const peer of delivered) this.#notify(messageNotice(peer, message));
    return { message, delivered };
  }

  inbox(caller: string | null, options: { unread: boolean; limit: number }): { you: string; unread: number; messages: Message[] } {
    const you = caller ?? OVERSEER;
    return { you, ...this.#messages.inbox(you, options) };
  }

  ack(caller: string | null, ids: readonly string[]): string[] {
    return this.#messages.ack(caller ?? OVERSEER, ids);
  }

  thread(thread: string, limit: number): Message[] {
    return this.#messages.thread(thread, limit);
  }

  search(query: string, limit: number, signal?: AbortSignal): Promise<Message[]> {
    return this.#messages.search(query, limit, signal);
  }

  /** The latest messages of every thread, oldest first. */
  recent(limit: number): Message[] {
    return this.#messages.recent(limit);
  }

  #peer(caller: string | null, what: string): string {
    if (caller === null) throw new CapabilityError('refused', `${what} needs an MCP session: only a peer holds claims`);
    return caller;
  }

  #clientOf(peer: string): PeerClient {
    return this.#board.clientOf(peer) ?? { name: 'unknown', version: '' };
  }

  /** Journals an event; answers where its line went (null: nowhere, or closed). */
  #journal(journal: Journal | null, event: ClaimEvent | MessageEvent): JournalLine | null {
    if (this.#closed) return null;
    this.#onChange();
    return journal?.append({ at: new Date(this.#now()).toISOString(), epoch: this.#epoch, ...event }) ?? null;
  }

  #restoreClaims(claims: readonly JournalEntry[]): void {
    for (const entry of claims) {
      const claim = entry.claim as StoredClaim | undefined;
      this.#sawPeer(claim?.peer);
      this.#sawPeer(entry.by);
      if (entry.event === 'claim' && claim && typeof claim.id === 'string') {
        // Numbers stay unique across restarts; only this lineage's claims come back.
        if (entry.epoch === this.#epoch) this.#claims.restore(claim);
        else this.#claims.reserveIds(Number(claim.id.slice(1)) || 0);
      } else if (entry.epoch === this.#epoch && (entry.event === 'release' || entry.event === 'renew') && Array.isArray(entry.ids)) {
        this.#claims.replay(entry as Exclude<ClaimEvent, { event: 'claim' }>);
      }
    }
  }

  /** Puts back one line of the messages' journal; false for a message that could not be filed. */
  #restoreMessageEvent(entry: JournalEntry, line: JournalLine): boolean {
    const message = entry.message as Partial<StoredMessage> | undefined;
    this.#sawPeer(message?.from);
    if (Array.isArray(message?.recipients)) message.recipients.forEach((peer) => this.#sawPeer(peer));
    this.#sawPeer(entry.peer);
    if (entry.event === 'message') return isStoredMessage(entry.message) && this.#messages.restore(entry.message, line);
    if (entry.event === 'ack' && entry.epoch === this.#epoch && typeof entry.peer === 'string' && Array.isArray(entry.ids)) {
      this.#messages.restoreAck(entry.peer, entry.ids as string[]);
    }
    return true;
  }

  /** A peer id the journals name, in any lineage, is never issued to another client. */
  #sawPeer(id: unknown): void {
    const number = peerNumber(id);
    if (number > 0) this.#board.reserveIds(number);
  }
}

/** A journalled message with what reading it needs (a line edited by hand may lack it). */
function isStoredMessage(value: unknown): value is StoredMessage {
  if (value === null || typeof value !== 'object') return false;
  const message = value as Partial<StoredMessage>;
  return typeof message.id === 'string' && typeof message.thread === 'string' && typeof message.body === 'string' && Array.isArray(message.to) && Array.isArray(message.recipients);
}

/** The number of a peer id (`p12` → 12); 0 for anything else (the overseer, junk). */
function peerNumber(id: unknown): number {
  return typeof id === 'string' && /^p[1-9]\d{0,8}$/.test(id) ? Number(id.slice(1)) : 0;
}
