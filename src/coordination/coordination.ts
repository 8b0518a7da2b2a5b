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
import type { SharedPort } from './shared-port.js';
import { Journal, readJournal, scanJournal, type JournalEntry, type JournalLine } from './journal.js';
import { MessageBoard, type MessageEvent, type StoredMessage } from './messages.js';
import { claimNotice, messageNotice, withdrawnNotice } from './notices.js';
import { RateLimiter, type RateLimit } from './rate-limit.js';
import { sessionOf } from '../platform/proc.js';
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import { EVERYONE, OVERSEER, type CheckAnswer, type CheckView, type Claim, type Message, type Overlap } from './schemas.js';

/** What coordination capabilities may do. `caller` is a peer id, or null for the overseer. */
export interface CoordinationAccess {
  /** Grants a claim; on a shared board through its ledger first (docs/SCALE.md). */
  grant(caller: string | null, request: ClaimRequest): Promise<Granted>;
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
/** How many times a grant is decided again when other checkouts keep appending to the ledger first. */
const MAX_GRANT_ATTEMPTS = 20;

export class Coordination implements CoordinationAccess {
  readonly #board: PeerBoard;
  readonly #claims: ClaimBoard;
  readonly #messages: MessageBoard;
  readonly #sendRates: RateLimiter;
  readonly #claimJournal: Journal | null;
  readonly #messageJournal: Journal | null;
  readonly #notify: (notice: PeerNotice) => void;
  readonly #onChange: () => void;
  #now: () => number;
  readonly #epoch: string;
  #sweep: NodeJS.Timeout | null = null;
  /** The board shared with other checkouts (worktrees, machines); null while this checkout is alone. */
  #shared: SharedPort | null = null;
  /** One grant at a time goes through the shared ledger: a second one decides after the first is kept. */
  #granting: Promise<unknown> = Promise.resolve();
  /** Set while applying what the shared ledger said, so that it is journalled here but not published back. */
  #fromLedger = false;
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
      isLive: (peer) => this.#board.known(peer),
      record: (event) => this.#journal(this.#claimJournal, event),
      now: () => this.#now(),
      place: () => (this.#shared ? this.#board.place : null),
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
    return this.#told(this.#claims.claim(peer, this.#clientOf(peer), request), request);
  }

  /**
   * Grants a claim. On a shared board the decision is taken against the ledger's latest state and
   * appended only if nothing was appended since (optimistic concurrency): when another checkout
   * got there first, the board is brought up to date and the claim decided again.
   */
  grant(caller: string | null, request: ClaimRequest): Promise<Granted> {
    const shared = this.#shared;
    if (shared === null) {
      try {
        return Promise.resolve(this.claim(caller, request));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const peer = this.#peer(caller, 'claiming');
    const granting = this.#granting.then(async () => {
      for (let attempt = 1; ; attempt += 1) {
        await shared.catchUp();
        const decision = this.#claims.decide(peer, this.#clientOf(peer), request);
        const outcome = await shared.appendClaim(decision.stored);
        if (outcome === 'conflict' && attempt < MAX_GRANT_ATTEMPTS) continue;
        if (outcome === 'conflict') throw new CapabilityError('busy', `the shared board changed under ${MAX_GRANT_ATTEMPTS} attempts in a row to grant this claim: try again`);
        this.#fromLedger = true;
        try {
          return this.#told(this.#claims.grant(decision, outcome === 'local-only'), request);
        } finally {
          this.#fromLedger = false;
        }
      }
    });
    this.#granting = granting.catch(() => undefined);
    return granting;
  }

  /** Tells the holders of the live claims a granted claim overlaps. */
  #told(granted: Granted, request: ClaimRequest): Granted {
    for (const overlap of granted.warnings) {
      if (!overlap.live) continue;
      this.#notify(claimNotice(granted.claim, overlap, request.exclusive || overlap.exclusive));
    }
    return granted;
  }

  /**
   * Shares this board with other checkouts through `port` (src/board/): every claim and message
   * event of this checkout is published there, and what the others publish comes back through
   * the `apply…` and `receive` methods. `now` is the shared clock (the broker's), which decides expiry.
   */
  share(port: SharedPort, now?: () => number): void {
    this.#shared = port;
    if (now) this.#now = now;
  }

  /** Another checkout's claim, from the ledger; the holders of the live claims of ours it overlaps are told. */
  applyRemoteClaim(claim: StoredClaim): void {
    this.#claims.applyRemote(claim);
    const view = this.#claims.view(claim.id);
    if (!view) return;
    for (const overlap of this.#claims.overlapsOf(claim.id)) {
      if (!overlap.live || overlap.claim.includes('@')) continue;
      this.#notify(claimNotice(view, overlap, claim.exclusive || overlap.exclusive));
    }
  }

  /** A renewal or release from the ledger. */
  applyRemoteChange(event: Exclude<ClaimEvent, { event: 'claim' }>): void {
    this.#fromLedger = true;
    try {
      this.#claims.applyRemoteChange(event);
    } finally {
      this.#fromLedger = false;
    }
  }

  /** Forgets the other checkouts' claims before the ledger is read again from its start. */
  forgetRemoteClaims(): void {
    this.#claims.dropRemote();
  }

  /** This checkout's claims granted while the ledger was out of reach, oldest first. */
  localOnlyClaims(): StoredClaim[] {
    return this.#claims.localOnly();
  }

  /**
   * Reconciles a local-only claim once the ledger is back and read: when the ledger granted an
   * overlapping claim meanwhile (either exclusive), the ledger's order decides and this one ends,
   * its peer told; otherwise it is appended. Answers what happened.
   */
  async reconcile(claim: StoredClaim): Promise<'kept' | 'withdrawn' | 'pending'> {
    const shared = this.#shared;
    if (!shared) return 'kept';
    const reconciling = this.#granting.then(async () => {
      for (let attempt = 1; attempt <= MAX_GRANT_ATTEMPTS; attempt += 1) {
        await shared.catchUp();
        const winners = this.#claims.conflictsOf(claim.id);
        const view = this.#claims.view(claim.id);
        if (!view) return 'kept' as const;
        if (winners.length > 0) {
          this.#claims.withdraw(claim.id);
          this.#notify(withdrawnNotice(view, winners));
          return 'withdrawn' as const;
        }
        const outcome = await shared.appendClaim(claim);
        if (outcome === 'granted') {
          this.#claims.confirm(claim.id);
          this.#onChange();
          return 'kept' as const;
        }
        if (outcome === 'local-only') return 'pending' as const;
      }
      return 'pending' as const;
    });
    this.#granting = reconciling.catch(() => undefined);
    return reconciling;
  }

  /**
   * A message another checkout published, for this checkout's peers (`recipients` already
   * resolved here, `from` naming its checkout): filed, journalled and told as if sent here.
   */
  receive(input: { from: string; from_client?: PeerClient; to: string[]; recipients: string[]; body: string; subject?: string; thread: string }): Message {
    this.#fromLedger = true;
    try {
      const message = this.#messages.send(input);
      for (const peer of input.recipients) if (this.#board.has(peer)) this.#notify(messageNotice(peer, message));
      return message;
    } finally {
      this.#fromLedger = false;
    }
  }

  /** Whether the board is shared with other checkouts. */
  get shared(): boolean {
    return this.#shared !== null;
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
        // This checkout's peers; the other checkouts resolve "all" to theirs when it reaches them.
        for (const peer of this.#board.local()) if (peer.id !== from) recipients.add(peer.id);
      } else if (name === OVERSEER || this.#board.known(name)) {
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
    // A peer of another checkout is told by its own server, when the message reaches it through the shared board.
    const delivered = [...recipients].filter((peer) => peer !== OVERSEER && this.#board.known(peer));
    for (const peer of delivered) if (this.#board.has(peer)) this.#notify(messageNotice(peer, message));
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
    if (this.#shared && !this.#fromLedger && event.event !== 'ack') this.#shared.publish(event);
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
