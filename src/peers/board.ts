/**
 * The peer board: every MCP session attached to this server, named from its `initialize`, with
 * what it announced. Held in the memory of the process that owns the stdio session; an owner
 * saves the announcements beside its lease so a successor can give them back to the peers that
 * re-attach after a takeover.
 */
import type { Announcement, CheckoutPlace, Overlap, Peer, PeerClient } from './schema.js';

export type { Announcement, CheckoutPlace, Overlap, Peer, PeerClient } from './schema.js';

/**
 * The peers of the other checkouts that share this board (docs/SCALE.md), as their presence says
 * now: only live ones are listed. Ids carry their checkout (`p2@feature-1a2b`).
 */
export interface RemotePeers {
  list(): Peer[];
  /** Whether a peer of another checkout is attached there now. */
  has(id: string): boolean;
  clientOf(id: string): PeerClient | undefined;
}

/** What capability handlers may do with the board. */
export interface PeerAccess {
  list(): Peer[];
  announce(peerId: string, intent: string, paths: string[]): { peer: Peer; overlaps: Overlap[] };
}

/** What changed on the board. */
export type BoardChange = 'join' | 'leave' | 'announce';

export interface PeerBoardOptions {
  now?: () => number;
  /** Peer numbers a previous server of this checkout already gave out. */
  issuedBefore?: number;
  /** Announcements of the previous server's peers, given back when the same id re-attaches. */
  restorable?: ReadonlyMap<string, Announcement>;
  onChange?: (change: BoardChange) => void;
}

/** Where a peer's agent runs: its process chain (the agent first) and its session. */
export interface PeerProcess {
  chain: readonly number[];
  session: number | null;
}

interface PeerRecord {
  id: string;
  client: PeerClient;
  transport: Peer['transport'];
  connectedAt: number;
  lastSeen: number;
  announcement?: Announcement;
  process?: PeerProcess;
}

/** True when `a` and `b` are the same path or one contains the other on a `/` boundary. */
export function pathsOverlap(a: string, b: string): boolean {
  const x = normalisePath(a);
  const y = normalisePath(b);
  if (x === y || x === '' || y === '') return true;
  return x.startsWith(`${y}/`) || y.startsWith(`${x}/`);
}

/** `./src/` → `src`; `.`, `./` and `/` name the whole checkout (the empty path). */
function normalisePath(path: string): string {
  const normal = path.trim().replace(/^\.\/+/, '').replace(/\/+/g, '/').replace(/\/$/, '');
  return normal === '.' ? '' : normal;
}

export class PeerBoard implements PeerAccess {
  #peers = new Map<string, PeerRecord>();
  #next = 1;
  readonly #now: () => number;
  readonly #restorable: Map<string, Announcement>;
  readonly #onChange: (change: BoardChange) => void;
  #remote: RemotePeers | null = null;
  /** This checkout's place once the board is shared (its claims carry it to the others). */
  #place: CheckoutPlace | null = null;

  constructor(options: PeerBoardOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#next = (options.issuedBefore ?? 0) + 1;
    this.#restorable = new Map(options.restorable ?? []);
    this.#onChange = options.onChange ?? (() => {});
  }

  /** Shares the board: the other checkouts' peers are listed (and known) beside this one's. */
  share(remote: RemotePeers, place: CheckoutPlace): void {
    this.#remote = remote;
    this.#place = { ...place };
  }

  /** This checkout's place once the board is shared; null otherwise. */
  get place(): CheckoutPlace | null {
    return this.#place ? { ...this.#place } : null;
  }

  /** The highest peer number issued so far. */
  get issued(): number {
    return this.#next - 1;
  }

  /** Peer numbers any server of this checkout gave out (its journals say so) are never issued again. */
  reserveIds(highest: number): void {
    if (Number.isSafeInteger(highest)) this.#next = Math.max(this.#next, highest + 1);
  }

  /**
   * Adds a peer. A `preferred` id (a client that survived a takeover keeps its identity) is
   * granted when it is well-formed and free; otherwise the next fresh id is issued. Only a holder
   * of the lease's token can ask for one (every `/mcp` request needs it). A reclaimed id gets back
   * the announcement its peer made on the previous server.
   */
  join(client: PeerClient, transport: Peer['transport'], preferred?: string, process?: PeerProcess): string {
    const wanted = preferred !== undefined && /^p[1-9]\d{0,8}$/.test(preferred) && !this.#peers.has(preferred) ? preferred : null;
    const id = wanted ?? `p${this.#next}`;
    this.#next = Math.max(this.#next, Number(id.slice(1)) + 1);
    const at = this.#now();
    const record: PeerRecord = { id, client, transport, connectedAt: at, lastSeen: at, ...(process ? { process } : {}) };
    const restored = wanted === null ? undefined : this.#restorable.get(wanted);
    if (restored) record.announcement = restored;
    this.#restorable.delete(id);
    this.#peers.set(id, record);
    this.#onChange('join');
    return id;
  }

  leave(id: string): boolean {
    if (!this.#peers.delete(id)) return false;
    this.#onChange('leave');
    return true;
  }

  /** The announcements to save for a successor, by peer id. */
  announcements(): Array<{ id: string; announcement: Announcement }> {
    return [...this.#peers.values()].flatMap((p) => (p.announcement ? [{ id: p.id, announcement: p.announcement }] : []));
  }

  touch(id: string): void {
    const peer = this.#peers.get(id);
    if (peer) peer.lastSeen = this.#now();
  }

  clientOf(id: string): PeerClient | undefined {
    const client = this.#peers.get(id)?.client;
    return client ? { ...client } : this.#remote?.clientOf(id);
  }

  /** Where the peer's agent runs, when its client said (stdio clients do). */
  processOf(id: string): PeerProcess | undefined {
    return this.#peers.get(id)?.process;
  }

  /** Whether a peer of this checkout is attached. */
  has(id: string): boolean {
    return this.#peers.has(id);
  }

  /** Whether a peer is attached here or, when the board is shared, on another checkout. */
  known(id: string): boolean {
    return this.#peers.has(id) || (this.#remote?.has(id) ?? false);
  }

  get size(): number {
    return this.#peers.size;
  }

  /** Every peer: this checkout's, then the other checkouts' when the board is shared. */
  list(): Peer[] {
    return [...this.local(), ...(this.#remote?.list() ?? [])];
  }

  /** The peers attached to this server. */
  local(): Peer[] {
    return [...this.#peers.values()].map((p) => this.#view(p));
  }

  announce(peerId: string, intent: string, paths: string[]): { peer: Peer; overlaps: Overlap[] } {
    const record = this.#peers.get(peerId);
    if (!record) throw new Error(`no peer ${peerId}`);
    const cleaned = [...new Set(paths.map(normalisePath))].sort();
    record.announcement = { intent: intent.trim(), paths: cleaned, at: new Date(this.#now()).toISOString() };
    record.lastSeen = this.#now();
    this.#onChange('announce');
    const overlaps: Overlap[] = [];
    for (const other of this.#peers.values()) {
      if (other.id === peerId || !other.announcement) continue;
      for (const path of cleaned) {
        for (const theirs of other.announcement.paths) {
          if (pathsOverlap(path, theirs)) overlaps.push({ peer: other.id, path, their_path: theirs });
        }
      }
    }
    return { peer: this.#view(record), overlaps };
  }

  #view(p: PeerRecord): Peer {
    const peer: Peer = {
      id: p.id,
      client: { ...p.client },
      transport: p.transport,
      connected_at: new Date(p.connectedAt).toISOString(),
      last_seen_seconds_ago: Math.max(0, Math.floor((this.#now() - p.lastSeen) / 1000)),
    };
    if (p.announcement) peer.announcement = { ...p.announcement, paths: [...p.announcement.paths] };
    return peer;
  }
}
