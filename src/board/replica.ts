/**
 * One checkout's replica of the shared board. It publishes what happens here (claims through the
 * ledger's optimistic append, everything else as it happens), applies what the other checkouts
 * publish, and keeps their presence: which checkouts are alive and who is attached to each.
 *
 * While the transport cannot reach the others, this checkout serves alone at once: claims are
 * granted here as local-only, and everything else waits in a queue. When it can again, the claims
 * ledger is read from its start, each local-only claim is decided again against it (the ledger's
 * order decides: one that lost to a claim granted meanwhile ends, its peer told), and the queue is
 * published.
 */
import { log } from '../platform/log.js';
import type { ClaimEvent, StoredClaim } from '../coordination/claims.js';
import type { Coordination } from '../coordination/coordination.js';
import type { MessageEvent, StoredMessage } from '../coordination/messages.js';
import type { AppendOutcome, SharedPort } from '../coordination/shared-port.js';
import type { PeerBoard, RemotePeers } from '../peers/board.js';
import type { Peer, PeerClient } from '../peers/schema.js';
import type { BoardTransport, LedgerEntry, LedgerMessage, PresenceRecord, TransportSink } from './contract.js';
import type { CheckoutIdentity } from './identity.js';
import { labelOf, localize, seenFrom, threadSeenFrom } from './ids.js';
import { CheckoutSessionSchema, SHARED_SESSIONS, type BoardAccess, type BoardStatus, type CheckoutSession } from './schemas.js';

export interface ReplicaOptions {
  transport: BoardTransport;
  identity: CheckoutIdentity;
  board: PeerBoard;
  coordination: Coordination;
  /** How long a checkout counts as alive after its last presence; its heartbeat is a third of it. */
  presenceTtlMs: number;
  /** Another checkout's peers or presence changed (the page shows them). */
  onChange?: () => void;
}

interface Presence {
  record: PresenceRecord;
  seenAt: number;
}

/** The most messages remembered to tell a redelivery from a new one. */
const SEEN_MESSAGES = 10_000;
/** The most events waiting for the transport to come back; past it the oldest are dropped (and logged). */
const MAX_QUEUED = 10_000;
/** After a publish that got no answer while the transport still counts as connected. */
const DRAIN_RETRY_MS = 1_000;

export class SharedBoard implements SharedPort, RemotePeers, TransportSink, BoardAccess {
  readonly #transport: BoardTransport;
  readonly #identity: CheckoutIdentity;
  readonly #board: PeerBoard;
  readonly #coordination: Coordination;
  readonly #ttlMs: number;
  readonly #onChange: () => void;
  readonly #presence = new Map<string, Presence>();
  readonly #seenMessages = new Set<string>();
  readonly #queue: LedgerEntry[] = [];
  /** The claims ledger's position this replica has applied. */
  #applied = 0;
  #up = false;
  #heartbeat: NodeJS.Timeout | null = null;
  #presenceDue = false;
  #resuming: Promise<void> | null = null;
  #draining = false;
  #warnedLabel = false;
  /** This checkout's harness sessions, as the session table last said; where they come from. */
  #sessions: CheckoutSession[] = [];
  #sessionSource: (() => Promise<CheckoutSession[]>) | null = null;
  #closing: Promise<void> | null = null;

  constructor(options: ReplicaOptions) {
    this.#transport = options.transport;
    this.#identity = options.identity;
    this.#board = options.board;
    this.#coordination = options.coordination;
    this.#ttlMs = options.presenceTtlMs;
    this.#onChange = options.onChange ?? (() => undefined);
  }

  get label(): string {
    return this.#identity.label;
  }

  get kind(): BoardTransport['kind'] {
    return this.#transport.kind;
  }

  /** Whether the others can be reached now. */
  get reachableNow(): boolean {
    return this.#up;
  }

  /** Shares the peer board and the coordination, then starts the transport and the heartbeat. */
  async start(): Promise<void> {
    this.#board.share(this, this.#identity.place);
    this.#coordination.share(this, () => this.#transport.now());
    await this.#transport.start(this);
    this.#heartbeat = setInterval(() => this.#beat(), Math.max(250, Math.floor(this.#ttlMs / 3)));
    this.#heartbeat.unref();
    this.presenceChanged();
    log.info(`the board is shared (${this.#transport.kind}: ${this.#transport.where}); this checkout is ${this.#identity.label}`);
  }

  /** Where this checkout's harness sessions are read from at every heartbeat (the session table's thread). */
  showSessions(source: () => Promise<CheckoutSession[]>): void {
    this.#sessionSource = source;
    this.#beat();
  }

  /** A heartbeat: the sessions read again, then the presence published. */
  #beat(): void {
    const source = this.#sessionSource;
    if (!source) {
      this.presenceChanged();
      return;
    }
    source()
      .then((sessions) => (this.#sessions = sessions.slice(0, SHARED_SESSIONS)))
      .catch((error) => log.debug(`sessions not read for the shared board: ${String(error)}`))
      .finally(() => this.presenceChanged());
  }

  /** The checkouts sharing this board, as this one sees them now. */
  status(): BoardStatus {
    const now = this.#transport.now();
    const checkouts = [...this.#presence.values()]
      .map(({ record, seenAt }) => ({
        ...record.place,
        checkout: record.label,
        live: now - seenAt < this.#ttlMs,
        last_seen_seconds_ago: Math.max(0, Math.floor((now - seenAt) / 1000)),
        peers: record.peers.length,
        sessions: (record.sessions ?? []).slice(0, SHARED_SESSIONS).flatMap((session) => {
          const parsed = CheckoutSessionSchema.safeParse(session);
          return parsed.success ? [parsed.data] : [];
        }),
      }))
      .sort((a, b) => Number(b.live) - Number(a.live) || a.last_seen_seconds_ago - b.last_seen_seconds_ago);
    return { shared: true, transport: this.#transport.kind, reachable: this.#up, you: { ...this.#identity.place }, checkouts };
  }

  /** The peers here changed: the others hear it once this turn is over (changes in one turn coalesce). */
  presenceChanged(): void {
    if (this.#presenceDue || this.#closing) return;
    this.#presenceDue = true;
    setImmediate(() => {
      this.#presenceDue = false;
      if (this.#closing) return;
      this.#transport.putPresence(this.ownPresence()).catch((error) => log.debug(`presence not published: ${String(error)}`));
    });
  }

  async close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#heartbeat) clearInterval(this.#heartbeat);
      await this.#transport.close();
    })();
    return this.#closing;
  }

  // ---- SharedPort: what coordination asks -------------------------------------------------

  catchUp(): Promise<void> {
    return this.#up ? this.#transport.catchUp() : Promise.resolve();
  }

  async appendClaim(claim: StoredClaim): Promise<AppendOutcome> {
    if (!this.#up) return 'local-only';
    const outcome = await this.#transport.appendClaim(this.#entry({ event: 'claim', claim }), this.#applied);
    return outcome === 'unreachable' ? 'local-only' : outcome;
  }

  publish(event: ClaimEvent | MessageEvent): void {
    if (event.event === 'ack') return; // an inbox is its checkout's own
    const entry =
      event.event === 'message'
        ? this.#entry({ event: 'message', message: withoutLocalParts(event.message) })
        : this.#entry(event);
    if (!this.#up || this.#queue.length > 0) {
      this.#enqueue(entry);
      return;
    }
    void this.#transport.publish(entry).then((sent) => {
      if (sent) return;
      this.#enqueue(entry);
      // Still counted as reachable (one answer was lost): try again shortly rather than at the next reconnect.
      setTimeout(() => void this.#drain(), DRAIN_RETRY_MS).unref();
    });
  }

  // ---- TransportSink: what the others say --------------------------------------------------

  claimRecord(seq: number, entry: LedgerEntry | null): void {
    this.#applied = seq;
    if (entry === null || entry.origin === this.#identity.id || entry.event.event === 'message') return;
    const { label } = entry;
    const own = this.#identity.label;
    const event = entry.event;
    if (event.event === 'claim') {
      const claim = event.claim;
      this.#coordination.applyRemoteClaim({ ...claim, id: seenFrom(claim.id, label, own), peer: seenFrom(claim.peer, label, own) });
    } else if (event.event === 'renew') {
      this.#coordination.applyRemoteChange({ ...event, ids: event.ids.map((id) => seenFrom(id, label, own)) });
    } else {
      const by = event.by === undefined ? {} : { by: seenFrom(event.by, label, own) };
      this.#coordination.applyRemoteChange({ event: 'release', reason: event.reason, ids: event.ids.map((id) => seenFrom(id, label, own)), ...by });
    }
  }

  claimsReset(): void {
    this.#applied = 0;
    this.#coordination.forgetRemoteClaims();
  }

  message(entry: LedgerEntry): void {
    if (entry.origin === this.#identity.id || entry.event.event !== 'message') return;
    const { message } = entry.event;
    const key = `${entry.origin}:${message.id}`;
    if (this.#seenMessages.has(key)) return;
    this.#seenMessages.add(key);
    if (this.#seenMessages.size > SEEN_MESSAGES) this.#seenMessages.delete(this.#seenMessages.values().next().value as string);
    const own = this.#identity.label;
    const to = message.to.map((name) => seenFrom(name, entry.label, own));
    const recipients = new Set<string>();
    for (const name of to) {
      if (name === 'all') for (const peer of this.#board.local()) recipients.add(peer.id);
      else if (name === 'overseer' || (labelOf(name) === null && this.#board.has(name))) recipients.add(name);
    }
    this.#coordination.receive({
      from: seenFrom(message.from, entry.label, own),
      ...(message.from_client ? { from_client: message.from_client } : {}),
      to,
      recipients: [...recipients],
      body: message.body,
      ...(message.subject === undefined ? {} : { subject: message.subject }),
      thread: threadSeenFrom(message.thread, entry.label, own),
    });
  }

  presence(checkout: string, record: PresenceRecord | null, seenAt: number): void {
    if (checkout === this.#identity.id) return;
    if (record?.label === this.#identity.label && !this.#warnedLabel) {
      // Four hex digits of two checkouts' hashes agree, and their folders are named alike: ids would be ambiguous.
      this.#warnedLabel = true;
      log.warn(`another checkout sharing this board is also named ${record.label} (on ${record.place.host}): rename one checkout's folder, or their ids (p1@${record.label}) cannot be told apart`);
    }
    if (record === null) this.#presence.delete(checkout);
    else this.#presence.set(checkout, { record, seenAt });
    this.#onChange();
  }

  reachable(up: boolean): void {
    if (up === this.#up) return;
    this.#up = up;
    if (!up) {
      log.warn(`the shared board (${this.#transport.where}) is out of reach: serving this checkout alone; claims granted meanwhile are local-only until it returns`);
      return;
    }
    this.#resuming ??= this.#resume().finally(() => (this.#resuming = null));
  }

  // ---- RemotePeers: the other checkouts' peers ---------------------------------------------

  list(): Peer[] {
    const now = this.#transport.now();
    const peers: Peer[] = [];
    for (const { record, seenAt } of this.#live(now)) {
      for (const peer of record.peers) peers.push(this.#peerView(record, peer, seenAt, now));
    }
    return peers;
  }

  has(id: string): boolean {
    return this.#find(id) !== null;
  }

  clientOf(id: string): PeerClient | undefined {
    const found = this.#find(id);
    return found ? { ...found.client } : undefined;
  }

  // ---- inside ------------------------------------------------------------------------------

  /** The ledger is back: read it again, reconcile what was granted here alone, send what waited. */
  async #resume(): Promise<void> {
    log.info(`the shared board (${this.#transport.where}) is reachable: reconciling`);
    await this.#transport.catchUp();
    for (const claim of this.#coordination.localOnlyClaims()) {
      const outcome = await this.#coordination.reconcile(claim);
      if (outcome === 'withdrawn') log.warn(`claim ${claim.id} of ${claim.peer}, granted while the board was out of reach, lost to a claim the board granted meanwhile: it has ended`);
    }
    await this.#drain();
    this.presenceChanged();
  }

  /** Publishes what waited, in order, while the others can be reached. */
  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#up && this.#queue.length > 0) {
        const entry = this.#queue[0] as LedgerEntry;
        if (!(await this.#transport.publish(entry))) {
          setTimeout(() => void this.#drain(), DRAIN_RETRY_MS).unref();
          return;
        }
        this.#queue.shift();
      }
    } finally {
      this.#draining = false;
    }
  }

  #enqueue(entry: LedgerEntry): void {
    this.#queue.push(entry);
    if (this.#queue.length > MAX_QUEUED) {
      this.#queue.shift();
      log.warn(`the shared board has been out of reach for ${MAX_QUEUED} events: the oldest waiting one was dropped`);
    }
  }

  #entry(event: LedgerEntry['event']): LedgerEntry {
    return { v: 1, origin: this.#identity.id, label: this.#identity.label, event };
  }

  ownPresence(): PresenceRecord {
    return {
      v: 1,
      checkout: this.#identity.id,
      label: this.#identity.label,
      place: this.#identity.place,
      peers: this.#board.local().map((peer) => ({
        id: peer.id,
        client: peer.client,
        transport: peer.transport,
        connected_at: peer.connected_at,
        ...(peer.announcement ? { announcement: peer.announcement } : {}),
      })),
      ...(this.#sessions.length > 0 ? { sessions: this.#sessions } : {}),
      at: this.#transport.now(),
    };
  }

  #live(now: number): Presence[] {
    return [...this.#presence.values()].filter((p) => now - p.seenAt < this.#ttlMs);
  }

  #find(id: string): PresenceRecord['peers'][number] | null {
    const label = labelOf(id);
    if (label === null) return null;
    const local = localize(id, label);
    for (const { record } of this.#live(this.#transport.now())) {
      if (record.label !== label) continue;
      return record.peers.find((peer) => peer.id === local) ?? null;
    }
    return null;
  }

  #peerView(record: PresenceRecord, peer: PresenceRecord['peers'][number], seenAt: number, now: number): Peer {
    return {
      id: `${peer.id}@${record.label}`,
      client: { ...peer.client },
      transport: peer.transport,
      connected_at: peer.connected_at,
      last_seen_seconds_ago: Math.max(0, Math.floor((now - seenAt) / 1000)),
      ...(peer.announcement ? { announcement: { ...peer.announcement } } : {}),
      where: { ...record.place },
    };
  }
}

/** A message without what is this checkout's own: its lineage, and whom it reached here. */
function withoutLocalParts(message: StoredMessage): LedgerMessage['message'] {
  const { recipients: _recipients, epoch: _epoch, ...rest } = message;
  return rest;
}
