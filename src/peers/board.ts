/**
 * The peer board: every MCP session attached to this server, named from its `initialize`, with
 * what it announced. Held in the memory of the process that owns the stdio session; gone with it.
 */

export interface PeerClient {
  name: string;
  version: string;
}

export interface Announcement {
  intent: string;
  paths: string[];
  at: string;
}

export interface Peer {
  id: string;
  client: PeerClient;
  transport: 'stdio' | 'http';
  connected_at: string;
  last_seen_seconds_ago: number;
  announcement?: Announcement;
}

export interface Overlap {
  peer: string;
  path: string;
  their_path: string;
}

/** What capability handlers may do with the board. */
export interface PeerAccess {
  list(): Peer[];
  announce(peerId: string, intent: string, paths: string[]): { peer: Peer; overlaps: Overlap[] };
}

interface PeerRecord {
  id: string;
  client: PeerClient;
  transport: Peer['transport'];
  connectedAt: number;
  lastSeen: number;
  announcement?: Announcement;
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

  /** `issuedBefore`: peer numbers a previous server of this checkout already gave out. */
  constructor(options: { now?: () => number; issuedBefore?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#next = (options.issuedBefore ?? 0) + 1;
  }

  /** The highest peer number issued so far. */
  get issued(): number {
    return this.#next - 1;
  }

  /**
   * Adds a peer. A `preferred` id (a client that survived a takeover keeps its identity) is
   * granted when it is well-formed and free; otherwise the next fresh id is issued.
   */
  join(client: PeerClient, transport: Peer['transport'], preferred?: string): string {
    const wanted = preferred !== undefined && /^p[1-9]\d{0,8}$/.test(preferred) && !this.#peers.has(preferred) ? preferred : null;
    const id = wanted ?? `p${this.#next}`;
    this.#next = Math.max(this.#next, Number(id.slice(1)) + 1);
    const at = this.#now();
    this.#peers.set(id, { id, client, transport, connectedAt: at, lastSeen: at });
    return id;
  }

  leave(id: string): boolean {
    return this.#peers.delete(id);
  }

  touch(id: string): void {
    const peer = this.#peers.get(id);
    if (peer) peer.lastSeen = this.#now();
  }

  has(id: string): boolean {
    return this.#peers.has(id);
  }

  get size(): number {
    return this.#peers.size;
  }

  list(): Peer[] {
    return [...this.#peers.values()].map((p) => this.#view(p));
  }

  announce(peerId: string, intent: string, paths: string[]): { peer: Peer; overlaps: Overlap[] } {
    const record = this.#peers.get(peerId);
    if (!record) throw new Error(`no peer ${peerId}`);
    const cleaned = [...new Set(paths.map(normalisePath))].sort();
    record.announcement = { intent: intent.trim(), paths: cleaned, at: new Date(this.#now()).toISOString() };
    record.lastSeen = this.#now();
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
