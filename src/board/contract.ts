/**
 * The shared board's contract: what one checkout's server exchanges with the others of its
 * repository, whatever carries it. Two transports implement it — a ledger in git's common
 * directory for the worktrees of one machine, NATS JetStream for checkouts anywhere — and one
 * replica (replica.ts) sits on top of either, so worktrees and machines are one mechanism.
 */
import type { ClaimEvent } from '../coordination/claims.js';
import type { StoredMessage } from '../coordination/messages.js';
import type { Announcement, CheckoutPlace, PeerClient } from '../peers/schema.js';
import type { CheckoutSession } from './schemas.js';

/** A message as the ledger carries it (recipients are resolved by each checkout for its own peers). */
export type LedgerMessage = { event: 'message'; message: Omit<StoredMessage, 'recipients' | 'epoch'> };

/**
 * One entry of a ledger. Ids and peers in `event` without an `@` belong to `origin`; with one
 * (`p2@feature-1a2b`) they name their checkout already.
 */
export interface LedgerEntry {
  v: 1;
  /** The checkout that wrote it: its id (hex). */
  origin: string;
  /** Its short name, which the others append to its ids. */
  label: string;
  event: ClaimEvent | LedgerMessage;
}

/** One peer of a checkout, as its presence shows it to the others. */
export interface PresencePeer {
  id: string;
  client: PeerClient;
  transport: 'stdio' | 'http';
  connected_at: string;
  announcement?: Announcement;
}

/** A checkout's presence: where it is and who is attached to its server. */
export interface PresenceRecord {
  v: 1;
  checkout: string;
  label: string;
  place: CheckoutPlace;
  peers: PresencePeer[];
  /** Its harness sessions (executor tasks among them), read-only for the others. */
  sessions?: CheckoutSession[];
  /** When it was written, on the writer's clock (worktrees read it on the same machine's clock). */
  at: number;
}

/** Where what the other checkouts publish arrives, in order per ledger. */
export interface TransportSink {
  /**
   * A record of the claims ledger; `seq` is its position (what an append expects next). null: a
   * record this checkout cannot read (malformed, or of a newer version), which only takes its place.
   */
  claimRecord(seq: number, entry: LedgerEntry | null): void;
  /** The claims ledger is about to be read again from its start (a reconnect): forget what it said. */
  claimsReset(): void;
  message(entry: LedgerEntry): void;
  /** A checkout's presence, or null when it left; `seenAt` on the transport's clock. */
  presence(checkout: string, record: PresenceRecord | null, seenAt: number): void;
  /** Whether the transport can reach the others now. */
  reachable(up: boolean): void;
  /** This checkout's presence as it is now (published first on every connection). */
  ownPresence(): PresenceRecord;
}

export type TransportAppend = 'granted' | 'conflict' | 'unreachable';

export interface BoardTransport {
  /** `worktrees` (git's common directory) or `federation` (NATS). */
  readonly kind: 'worktrees' | 'federation';
  /** Where it is, for the log (never a secret). */
  readonly where: string;
  /** The shared clock, in ms: the broker's for a federation, this machine's for worktrees. */
  now(): number;
  /** Starts delivering to `sink`; never waits for a broker (an unreachable one is retried in the background). */
  start(sink: TransportSink): Promise<void>;
  /** Resolves once every claims record known to exist has reached the sink. */
  catchUp(): Promise<void>;
  /** Appends to the claims ledger only if its last record is still the `expected`-th. */
  appendClaim(entry: LedgerEntry, expected: number): Promise<TransportAppend>;
  /** Appends a renewal or release to the claims ledger, or a message to the messages ledger; false when unreachable. */
  publish(entry: LedgerEntry): Promise<boolean>;
  /** Publishes this checkout's presence (on every change and every heartbeat). */
  putPresence(record: PresenceRecord): Promise<void>;
  /** Stops; the presence is removed first, so the others see this checkout leave at once. Safe twice. */
  close(): Promise<void>;
}
