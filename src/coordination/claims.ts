/**
 * The claim board: which peer reserves which paths, exclusively or shared, for what and until
 * when. A claim that overlaps another peer's exclusive claim (or is exclusive itself and overlaps
 * any) is refused unless its peer proceeds; every other overlap is granted with a warning. A claim
 * is live while its peer is attached; claims restored after a takeover wait for their peer to
 * re-attach. Every change is handed to `record` (the journal) as it happens.
 */
import { CapabilityError } from '../platform/errors.js';
import type { CheckoutPlace, PeerClient } from '../peers/schema.js';
import { PatternIndex } from './pattern-index.js';
import { normalisePattern } from './patterns.js';
import type { Claim, Overlap, PathPair } from './schemas.js';

/** A claim as the journal keeps it. */
export interface StoredClaim {
  id: string;
  peer: string;
  client: PeerClient;
  paths: string[];
  exclusive: boolean;
  intent: string;
  created_at: string;
  expires_at: string;
  /** The checkout it was granted on, when the board is shared. */
  where?: CheckoutPlace;
}

/** `conflict`: a claim granted while the shared board was out of reach lost to one the ledger granted meanwhile. */
export type ReleaseReason = 'released' | 'left' | 'expired' | 'stale' | 'conflict';

export type ClaimEvent =
  | { event: 'claim'; claim: StoredClaim }
  | { event: 'renew'; ids: string[]; expires_at: string }
  | { event: 'release'; ids: string[]; reason: ReleaseReason; by?: string };

export interface ClaimRequest {
  paths: string[];
  intent: string;
  exclusive: boolean;
  ttl_seconds: number;
  proceed: boolean;
}

export interface Granted {
  claim: Claim;
  warnings: Overlap[];
}

/** A claim decided against the board but not kept yet (a shared board grants it through its ledger first). */
export interface Decision {
  stored: StoredClaim;
  ttlMs: number;
  warnings: Overlap[];
}

export interface ClaimBoardOptions {
  /** The checkout's real path: patterns are relative to it. */
  root: string;
  /** Whether a peer is attached now. */
  isLive: (peer: string) => boolean;
  record?: (event: ClaimEvent) => void;
  now?: () => number;
  /** This checkout's place once the board is shared (stamped on the claims granted here). */
  place?: () => CheckoutPlace | null;
}

interface ClaimRecord extends StoredClaim {
  expiresAt: number;
  /** Granted on another checkout: it arrives and leaves through the shared ledger, never journalled here. */
  remote: boolean;
  /** Granted here while the shared ledger was out of reach; reconciled when it returns. */
  localOnly: boolean;
}

/** What a check finds: the claims met, once each, and each path with the ids of its claims. */
export interface Checked {
  claims: Claim[];
  paths: Array<{ path: string; claims: string[] }>;
}

/** `c17` → 17; anything else 0. Without a regular expression: a check sorts by it often. */
function claimNumber(id: string): number {
  if (id.length < 2 || id.charCodeAt(0) !== 99 /* c */) return 0;
  for (let i = 1; i < id.length; i += 1) {
    const code = id.charCodeAt(i);
    if (code < 48 || code > 57) return 0;
  }
  return Number(id.slice(1));
}


export class ClaimBoard {
  readonly #claims = new Map<string, ClaimRecord>();
  /** Every live claim's patterns, by claim id: what a check or a new claim meets. */
  readonly #index = new PatternIndex<string>();
  readonly #root: string;
  readonly #isLive: (peer: string) => boolean;
  readonly #record: (event: ClaimEvent) => void;
  readonly #now: () => number;
  readonly #place: () => CheckoutPlace | null;
  #next = 1;
  /** No claim expires before this (it may be earlier than the soonest expiry, never later). */
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(options: ClaimBoardOptions) {
    this.#root = options.root;
    this.#isLive = options.isLive;
    this.#record = options.record ?? (() => undefined);
    this.#now = options.now ?? Date.now;
    this.#place = options.place ?? (() => null);
  }

  /** Claim numbers already given out (by this server's lineage) are never issued again. */
  reserveIds(highest: number): void {
    this.#next = Math.max(this.#next, highest + 1);
  }

  /** Puts back a claim from the journal (a takeover); ignored when it has expired. */
  restore(claim: StoredClaim): void {
    this.reserveIds(claimNumber(claim.id));
    const expiresAt = Date.parse(claim.expires_at);
    if (!(expiresAt > this.#now())) return;
    this.#keep({ ...claim, expiresAt, remote: false, localOnly: false });
  }

  /** Re-applies a journalled renewal or release while restoring. */
  replay(event: Exclude<ClaimEvent, { event: 'claim' }>): void {
    for (const id of event.ids) {
      const claim = this.#claims.get(id);
      if (!claim) continue;
      if (event.event === 'release') {
        this.#drop(id);
      } else {
        claim.expires_at = event.expires_at;
        claim.expiresAt = Date.parse(event.expires_at);
        this.#nextExpiry = Math.min(this.#nextExpiry, claim.expiresAt);
      }
    }
  }

  /**
   * Grants a claim or refuses it (`conflict`) when it meets another live peer's claim and either
   * is exclusive, unless `proceed`. Answers the overlaps, each naming the other claim.
   */
  claim(peer: string, client: PeerClient, request: ClaimRequest): Granted {
    return this.grant(this.decide(peer, client, request));
  }

  /**
   * Decides a claim against the board as it is now (refusing it with `conflict` as `claim` does),
   * without keeping it; its id is taken, so a decision that is dropped leaves a gap, never a reuse.
   */
  decide(peer: string, client: PeerClient, request: ClaimRequest): Decision {
    this.#sweep();
    const paths = [...new Set(request.paths.map((p) => normalisePattern(this.#root, p)))].sort();
    const overlaps = this.#overlapsWith(peer, paths);
    const conflicts = overlaps.filter((o) => o.live && (o.exclusive || request.exclusive));
    if (conflicts.length > 0 && !request.proceed) throw conflictError(conflicts, request.exclusive);
    const at = this.#now();
    const place = this.#place();
    const stored: StoredClaim = {
      id: `c${this.#next++}`,
      peer,
      client: { ...client },
      paths,
      exclusive: request.exclusive,
      intent: request.intent.trim(),
      created_at: new Date(at).toISOString(),
      expires_at: new Date(at + request.ttl_seconds * 1000).toISOString(),
      ...(place ? { where: place } : {}),
    };
    return { stored, ttlMs: request.ttl_seconds * 1000, warnings: overlaps };
  }

  /** Keeps a decided claim and journals it; `localOnly` when the shared ledger could not be reached. */
  grant(decision: Decision, localOnly = false): Granted {
    const { stored } = decision;
    this.#keep({ ...stored, expiresAt: Date.parse(stored.expires_at), remote: false, localOnly });
    this.#record({ event: 'claim', claim: stored });
    return { claim: this.#view(this.#claims.get(stored.id) as ClaimRecord), warnings: decision.warnings };
  }

  /** A claim another checkout granted, as the shared ledger says (its ids already name that checkout). */
  applyRemote(claim: StoredClaim): void {
    const expiresAt = Date.parse(claim.expires_at);
    this.#drop(claim.id);
    if (expiresAt > this.#now()) this.#keep({ ...claim, expiresAt, remote: true, localOnly: false });
  }

  /** The shared ledger renewed or released claims: another checkout's quietly, this checkout's as if asked here. */
  applyRemoteChange(event: Exclude<ClaimEvent, { event: 'claim' }>): void {
    const ours: ClaimRecord[] = [];
    for (const id of event.ids) {
      const claim = this.#claims.get(id);
      if (!claim) continue;
      if (!claim.remote) ours.push(claim);
      else if (event.event === 'release') this.#drop(id);
      else Object.assign(claim, { expires_at: event.expires_at, expiresAt: Date.parse(event.expires_at) });
    }
    // Only a release reaches a claim of ours from elsewhere (release_stale on another checkout).
    if (event.event === 'release') this.#end(ours, event.reason, event.by);
  }

  /** Forgets every claim of another checkout (the ledger is read again from its start). */
  dropRemote(): void {
    for (const claim of [...this.#claims.values()]) if (claim.remote) this.#drop(claim.id);
  }

  /** This checkout's claims granted while the ledger was out of reach, oldest first. */
  localOnly(): StoredClaim[] {
    return [...this.#claims.values()].filter((c) => c.localOnly).map((c) => storedOf(c));
  }

  /**
   * Decides a local-only claim again, now that the ledger is back: the other checkouts' claims it
   * overlaps where either is exclusive. The ledger's order decides, alive or not: presence may lag
   * the ledger right after a reconnect, and a stale winner costs a `release_stale`, not a double grant.
   */
  conflictsOf(id: string): Overlap[] {
    const claim = this.#claims.get(id);
    if (!claim) return [];
    return this.#overlapsWith(claim.peer, claim.paths).filter((o) => o.claim.includes('@') && (o.exclusive || claim.exclusive));
  }

  /** The overlaps of a claim on the board with other peers' claims (a claim that arrived through the ledger). */
  overlapsOf(id: string): Overlap[] {
    const claim = this.#claims.get(id);
    return claim ? this.#overlapsWith(claim.peer, claim.paths) : [];
  }

  /** A claim on the board as capabilities answer it. */
  view(id: string): Claim | null {
    const claim = this.#claims.get(id);
    return claim ? this.#view(claim) : null;
  }

  /** A local-only claim reached the ledger. */
  confirm(id: string): void {
    const claim = this.#claims.get(id);
    if (claim) claim.localOnly = false;
  }

  /** A local-only claim lost to one the ledger granted meanwhile: it ends, journalled as `conflict`. */
  withdraw(id: string): void {
    const claim = this.#claims.get(id);
    if (claim) this.#end([claim], 'conflict');
  }

  /** Extends the peer's claims (all of them when `ids` is absent) to `ttlSeconds` from now. */
  renew(peer: string, ids: readonly string[] | undefined, ttlSeconds: number): Claim[] {
    this.#sweep();
    const claims = this.#own(peer, ids);
    if (claims.length === 0) return [];
    const expiresAt = this.#now() + ttlSeconds * 1000;
    const expires_at = new Date(expiresAt).toISOString();
    for (const claim of claims) {
      claim.expiresAt = expiresAt;
      claim.expires_at = expires_at;
    }
    this.#nextExpiry = Math.min(this.#nextExpiry, expiresAt);
    this.#record({ event: 'renew', ids: claims.map((c) => c.id), expires_at });
    return claims.map((c) => this.#view(c));
  }

  /** Ends the peer's claims (all of them when `ids` is absent). */
  release(peer: string, ids: readonly string[] | undefined): string[] {
    this.#sweep();
    return this.#end(this.#own(peer, ids), 'released', peer);
  }

  /** Ends claims whose peer is not attached; a live peer's claim is refused by name. */
  releaseStale(ids: readonly string[], by: string | null): string[] {
    this.#sweep();
    const claims = ids.map((id) => this.#claims.get(id) ?? notFound(id));
    const live = claims.find((c) => this.#isLive(c.peer));
    if (live) {
      throw new CapabilityError('refused', `claim ${live.id} is not stale: its peer ${live.peer} is attached (only that peer can release it, or it ends when the peer leaves)`);
    }
    return this.#end(claims, 'stale', by ?? undefined);
  }

  /** The peer left: its claims end with it. */
  peerLeft(peer: string): string[] {
    return this.#end([...this.#claims.values()].filter((c) => c.peer === peer && !c.remote), 'left');
  }

  /** Ends the claims whose time has passed; answers their ids (another checkout's go quietly: their own server journals them). */
  expire(): string[] {
    const now = this.#now();
    const expired = [...this.#claims.values()].filter((c) => c.expiresAt <= now);
    for (const claim of expired) if (claim.remote) this.#drop(claim.id);
    return this.#end(expired.filter((c) => !c.remote), 'expired');
  }

  list(): Claim[] {
    this.#sweep();
    return [...this.#claims.values()].map((c) => this.#view(c));
  }

  /**
   * Which claims cover each path (the paths normalised as claims are): each path with the ids of
   * its claims, and every claim met once, both in claim order. A claim covering many of the paths
   * is written out once, however many it covers.
   */
  check(paths: readonly string[]): Checked {
    this.#sweep();
    const met = new Set<string>();
    const checked = paths.map((asked) => {
      const path = normalisePattern(this.#root, asked);
      const ids = [...this.#index.covering(path)].sort(byClaimId);
      for (const id of ids) met.add(id);
      return { path, claims: ids };
    });
    const claims = [...met].sort(byClaimId).map((id) => this.#view(this.#claims.get(id) as ClaimRecord));
    return { claims, paths: checked };
  }

  /**
   * Every claim that overlaps another peer's, with those overlaps (through the index, so a board
   * of many claims is not compared pair by pair); claims without one are left out.
   */
  overlapping(): Array<{ claim: Claim; overlaps: Overlap[] }> {
    this.#sweep();
    const found: Array<{ claim: Claim; overlaps: Overlap[] }> = [];
    for (const claim of this.#claims.values()) {
      const overlaps = this.#overlapsWith(claim.peer, claim.paths);
      if (overlaps.length > 0) found.push({ claim: this.#view(claim), overlaps });
    }
    return found;
  }

  /** The highest claim number issued. */
  get issued(): number {
    return this.#next - 1;
  }

  get size(): number {
    return this.#claims.size;
  }

  #own(peer: string, ids: readonly string[] | undefined): ClaimRecord[] {
    if (ids === undefined) return [...this.#claims.values()].filter((c) => c.peer === peer);
    return ids.map((id) => {
      const claim = this.#claims.get(id) ?? notFound(id);
      if (claim.peer !== peer) {
        throw new CapabilityError('refused', `claim ${id} belongs to ${claim.peer}, not to you (${peer}); a stale claim is released with release_stale`);
      }
      return claim;
    });
  }

  #end(claims: readonly ClaimRecord[], reason: ReleaseReason, by?: string): string[] {
    if (claims.length === 0) return [];
    const ids = claims.map((c) => c.id);
    for (const id of ids) this.#drop(id);
    this.#record({ event: 'release', ids, reason, ...(by === undefined ? {} : { by }) });
    return ids;
  }

  /**
   * Expired claims go before anything reads the board (the timer only journals them sooner). The
   * board is walked only once the soonest expiry may have passed, not on every read.
   */
  #sweep(): void {
    const now = this.#now();
    if (now < this.#nextExpiry) return;
    let soonest = Number.POSITIVE_INFINITY;
    let expired = false;
    for (const claim of this.#claims.values()) {
      if (claim.expiresAt <= now) expired = true;
      else soonest = Math.min(soonest, claim.expiresAt);
    }
    this.#nextExpiry = soonest;
    if (expired) this.expire();
  }

  #keep(claim: ClaimRecord): void {
    this.#nextExpiry = Math.min(this.#nextExpiry, claim.expiresAt);
    this.#claims.set(claim.id, claim);
    this.#index.add(claim.id, claim.paths);
  }

  #drop(id: string): void {
    this.#claims.delete(id);
    this.#index.remove(id);
  }

  #overlapsWith(peer: string, paths: readonly string[]): Overlap[] {
    const pairsByClaim = new Map<string, PathPair[]>();
    for (const yours of paths) {
      for (const { owner, theirs } of this.#index.overlapping(yours)) {
        const pairs = pairsByClaim.get(owner) ?? [];
        pairs.push({ yours, theirs });
        pairsByClaim.set(owner, pairs);
      }
    }
    const overlaps: Overlap[] = [];
    // In claim order, as the list shows them.
    for (const other of this.#claims.values()) {
      const pairs = pairsByClaim.get(other.id);
      if (!pairs || other.peer === peer) continue;
      overlaps.push({
        claim: other.id,
        peer: other.peer,
        client: { ...other.client },
        intent: other.intent,
        exclusive: other.exclusive,
        live: this.#isLive(other.peer),
        paths: pairs,
      });
    }
    return overlaps;
  }

  #view(c: ClaimRecord): Claim {
    return {
      id: c.id,
      peer: c.peer,
      client: { ...c.client },
      live: this.#isLive(c.peer),
      paths: [...c.paths],
      exclusive: c.exclusive,
      intent: c.intent,
      created_at: c.created_at,
      expires_at: c.expires_at,
      // Where is said of another checkout's claims; one of this checkout's is here.
      ...(c.remote && c.where ? { where: { ...c.where } } : {}),
      ...(c.localOnly ? { local_only: true } : {}),
    };
  }
}

/** A claim as the journal and the ledger keep it (without what only this board tracks). */
function storedOf(c: ClaimRecord): StoredClaim {
  const { expiresAt: _expiresAt, remote: _remote, localOnly: _localOnly, ...stored } = c;
  return { ...stored, client: { ...c.client }, paths: [...c.paths] };
}

/** This checkout's claims in number order, then the other checkouts' by name. */
function byClaimId(a: string, b: string): number {
  return claimNumber(a) - claimNumber(b) || a.localeCompare(b, 'en', { numeric: true });
}

function notFound(id: string): never {
  throw new CapabilityError('not_found', `no claim ${id}: it was released, it expired, or it never existed`);
}

/** Peer-written text as data in a message another agent reads. */
export function quoted(text: string, max = 200): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

function conflictError(conflicts: readonly Overlap[], exclusive: boolean): CapabilityError {
  const named = conflicts.map((o) => {
    const how = o.exclusive ? 'exclusively' : 'shared';
    const paths = o.paths.map((p) => (p.yours === p.theirs ? p.yours : `${p.yours} (theirs: ${p.theirs})`)).join(', ');
    return `${o.peer} (${quoted(o.client.name, 64)}) holds ${o.paths.map((p) => p.theirs).filter((v, i, a) => a.indexOf(v) === i).join(', ')} ${how} for ${quoted(o.intent)} (claim ${o.claim}); it overlaps ${paths}`;
  });
  const why = exclusive && conflicts.every((o) => !o.exclusive) ? ' Your claim is exclusive; a shared claim would only warn.' : '';
  return new CapabilityError('conflict', `${named.join('; ')}.${why} Message that peer, wait for its claim to end, or pass proceed: true to claim anyway.`);
}
