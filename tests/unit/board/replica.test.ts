/**
 * The replica of a shared board over a transport the test drives. Covers:
 * - another checkout's peer is alive until the presence TTL passes on the transport's clock (at
 *   the default, 30 s: so a dead machine's claims stop refusing within 60 s), and its claims then
 *   show stale and only warn;
 * - a grant whose append finds the ledger moved is decided again against what moved it, and
 *   refused when that was an overlapping exclusive claim;
 * - out of reach, a claim is granted local-only at once; back, the ledger's order decides: a
 *   local-only claim overlapping a claim granted meanwhile ends and its peer is told, one that
 *   overlaps nothing is appended and confirmed;
 * - events of this checkout are published with its ids as they are; the other checkouts' ids
 *   arrive qualified, and ours come back local;
 * - a message by name from another checkout is filed and told to its recipient here only;
 * - the other checkouts are shown with their place, liveness, peers and sessions (what is not a
 *   session is left out).
 */
import { describe, expect, it } from 'vitest';
import type { BoardTransport, LedgerEntry, PresenceRecord, TransportAppend, TransportSink } from '../../../src/board/contract.js';
import { localize, qualify, threadSeenFrom } from '../../../src/board/ids.js';
import { SharedBoard } from '../../../src/board/replica.js';
import type { StoredClaim } from '../../../src/coordination/claims.js';
import { Coordination } from '../../../src/coordination/coordination.js';
import { CapabilityError } from '../../../src/platform/errors.js';
import { PeerBoard } from '../../../src/peers/board.js';
import type { PeerNotice } from '../../../src/peers/notice.js';
import { DEFAULTS } from '../../../src/platform/settings.js';

const ROOT = '/work/checkout';
const ME = { id: 'aaaaaaaaaaaaaaaa', label: 'mine-aaaa', place: { checkout: 'mine-aaaa', branch: 'main', host: 'here' } };
const OTHER = { id: 'bbbbbbbbbbbbbbbb', label: 'other-bbbb' };

/** A transport whose ledger, reachability and clock the test drives. */
class FakeTransport implements BoardTransport {
  readonly kind = 'worktrees' as const;
  readonly where = 'the test';
  clock = 1_000_000;
  sink: TransportSink | null = null;
  ledger: LedgerEntry[] = [];
  published: LedgerEntry[] = [];
  /** Called before an append is judged: the test appends another checkout's entry there. */
  beforeAppend: (() => void) | null = null;
  up = true;

  now(): number {
    return this.clock;
  }
  async start(sink: TransportSink): Promise<void> {
    this.sink = sink;
    sink.reachable(this.up);
  }
  async catchUp(): Promise<void> {}
  async appendClaim(entry: LedgerEntry, expected: number): Promise<TransportAppend> {
    if (!this.up) return 'unreachable';
    const before = this.beforeAppend;
    this.beforeAppend = null;
    before?.();
    if (expected !== this.ledger.length) return 'conflict';
    this.deliver(entry);
    return 'granted';
  }
  async publish(entry: LedgerEntry): Promise<boolean> {
    if (!this.up) return false;
    this.published.push(entry);
    if (entry.event.event !== 'message') this.deliver(entry);
    return true;
  }
  async putPresence(_record: PresenceRecord): Promise<void> {}
  async close(): Promise<void> {}
  /** Appends to the ledger and delivers it, as a watch would. */
  deliver(entry: LedgerEntry): void {
    this.ledger.push(entry);
    this.sink?.claimRecord(this.ledger.length, entry);
  }
  theirs(event: LedgerEntry['event']): LedgerEntry {
    return { v: 1, origin: OTHER.id, label: OTHER.label, event };
  }
}

function presence(peers: string[]): PresenceRecord {
  return {
    v: 1,
    checkout: OTHER.id,
    label: OTHER.label,
    place: { checkout: OTHER.label, branch: 'feature', host: 'there' },
    peers: peers.map((id) => ({ id, client: { name: `agent-${id}`, version: '1' }, transport: 'stdio', connected_at: new Date(0).toISOString() })),
    at: 0,
  };
}

function theirClaim(id: string, peer: string, paths: string[], clock: number): StoredClaim {
  return { id, peer, client: { name: `agent-${peer}`, version: '1' }, paths, exclusive: true, intent: 'theirs', created_at: new Date(clock).toISOString(), expires_at: new Date(clock + 3_600_000).toISOString() };
}

async function sharedBoard(options: { ttlMs?: number; up?: boolean } = {}) {
  const transport = new FakeTransport();
  transport.up = options.up ?? true;
  const notices: PeerNotice[] = [];
  const board = new PeerBoard();
  // The notices go where the owner would deliver them.
  const coordination = await Coordination.open({ root: ROOT, board, epoch: 'e1', journalDir: null, notify: (notice) => notices.push(notice) });
  const shared = new SharedBoard({ transport, identity: ME, board, coordination, presenceTtlMs: options.ttlMs ?? DEFAULTS.presenceTtlMs });
  await shared.start();
  await shared.close(); // stops the heartbeat; the replica still serves the test's calls
  const me = board.join({ name: 'agent-me', version: '1' }, 'stdio');
  return { transport, board, coordination, shared, me, notices };
}

const request = (paths: string[], exclusive = true) => ({ paths, intent: 'mine', exclusive, ttl_seconds: 3600, proceed: false });

describe('ids across checkouts', () => {
  it('qualifies another checkout\'s ids and gives ours back local', () => {
    expect(qualify('p3', 'other-bbbb')).toBe('p3@other-bbbb');
    expect(qualify('all', 'other-bbbb')).toBe('all');
    expect(localize('p3@mine-aaaa', 'mine-aaaa')).toBe('p3');
    expect(localize('p3@other-bbbb', 'mine-aaaa')).toBe('p3@other-bbbb');
    expect(threadSeenFrom('m7', 'other-bbbb', 'mine-aaaa')).toBe('m7@other-bbbb');
    expect(threadSeenFrom('m7@mine-aaaa', 'other-bbbb', 'mine-aaaa')).toBe('m7');
    expect(threadSeenFrom('parser-refactor', 'other-bbbb', 'mine-aaaa')).toBe('parser-refactor');
  });
});

describe('the replica of a shared board', () => {
  it('counts another checkout alive until the default presence TTL passes, then its claims only warn', async () => {
    expect(DEFAULTS.presenceTtlMs + DEFAULTS.presenceTtlMs / 3).toBeLessThanOrEqual(60_000);
    const { transport, board, coordination, me } = await sharedBoard();
    transport.sink?.presence(OTHER.id, presence(['p1']), transport.clock);
    transport.deliver(transport.theirs({ event: 'claim', claim: theirClaim('c1', 'p1', ['src/b.ts'], transport.clock) }));
    expect(board.list().map((p) => [p.id, p.where?.branch ?? null])).toEqual([[me, null], ['p1@other-bbbb', 'feature']]);
    transport.clock += DEFAULTS.presenceTtlMs - 1;
    await expect(coordination.grant(me, request(['src']))).rejects.toThrow(/p1@other-bbbb \("agent-p1"\) holds src\/b.ts exclusively/);
    transport.clock += 1;
    expect(board.known('p1@other-bbbb')).toBe(false);
    expect(coordination.claims()).toEqual([expect.objectContaining({ id: 'c1@other-bbbb', live: false })]);
    const granted = await coordination.grant(me, request(['src']));
    expect(granted.warnings).toEqual([expect.objectContaining({ claim: 'c1@other-bbbb', live: false })]);
  });

  it('shows the other checkouts with their place, liveness and sessions, read-only', async () => {
    const { transport, shared } = await sharedBoard();
    const session = { session: 's1', profile: 'cheap', agent: 'executor', status: 'running', createdAt: 'x', lastTurnAt: 'y' };
    transport.sink?.presence(OTHER.id, { ...presence(['p1', 'p2']), sessions: [session, { bogus: true } as never] }, transport.clock - 2_000);
    expect(shared.status()).toEqual({
      shared: true,
      transport: 'worktrees',
      reachable: true,
      you: ME.place,
      checkouts: [{ checkout: OTHER.label, branch: 'feature', host: 'there', live: true, last_seen_seconds_ago: 2, peers: 2, sessions: [session] }],
    });
  });

  it('decides a grant again when another checkout appended first, and refuses it over that claim', async () => {
    const { transport, coordination, me } = await sharedBoard();
    transport.sink?.presence(OTHER.id, presence(['p2']), transport.clock);
    transport.beforeAppend = () => transport.deliver(transport.theirs({ event: 'claim', claim: theirClaim('c9', 'p2', ['src/a.ts'], transport.clock) }));
    const refusal = await coordination.grant(me, request(['src/a.ts'])).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CapabilityError);
    expect((refusal as CapabilityError).code).toBe('conflict');
    expect(transport.ledger.map((e) => e.origin)).toEqual([OTHER.id]);
  });

  it('grants local-only while out of reach, and on return withdraws what the ledger granted to another meanwhile', async () => {
    const { transport, coordination, me, notices } = await sharedBoard({ up: false });
    const lost = await coordination.grant(me, request(['src/b.ts']));
    const kept = await coordination.grant(me, request(['docs']));
    expect([lost.claim.local_only, kept.claim.local_only]).toEqual([true, true]);
    // Meanwhile the ledger granted another checkout an overlapping claim.
    transport.sink?.presence(OTHER.id, presence(['p1']), transport.clock);
    transport.ledger.push(transport.theirs({ event: 'claim', claim: theirClaim('c4', 'p1', ['src'], transport.clock) }));
    transport.up = true;
    transport.sink?.claimsReset();
    transport.ledger.forEach((entry, at) => transport.sink?.claimRecord(at + 1, entry));
    transport.sink?.reachable(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const claims = coordination.claims();
    expect(claims.map((c) => [c.id, c.local_only ?? false])).toEqual([
      [kept.claim.id, false],
      ['c4@other-bbbb', false],
    ]);
    expect(transport.ledger.at(-1)?.event).toMatchObject({ event: 'claim', claim: { id: kept.claim.id } });
    expect(transport.published.at(-1)?.event).toMatchObject({ event: 'release', ids: [lost.claim.id], reason: 'conflict' });
    // Told first that the ledger's claim overlaps its own, then that its own has ended.
    expect(notices.map((n) => n.fallback?.params.event)).toEqual(['overlap', 'withdrawn']);
    expect(notices.at(-1)).toMatchObject({ peer: me, params: { meta: { kind: 'claim', id: lost.claim.id } } });
    expect(String((notices.at(-1)?.params as { content: string }).content)).toContain('p1@other-bbbb ("agent-p1", claim c4@other-bbbb');
  });

  it('files a message by name from another checkout for its recipient here', async () => {
    const { transport, coordination, me } = await sharedBoard();
    transport.sink?.presence(OTHER.id, presence(['p1']), transport.clock);
    transport.sink?.message(
      transport.theirs({ event: 'message', message: { id: 'm3', thread: 'm3', from: 'p1', to: [`${me}@${ME.label}`], body: 'hello', at: new Date(0).toISOString() } }),
    );
    const inbox = coordination.inbox(me, { unread: false, limit: 10 });
    expect(inbox.messages).toEqual([expect.objectContaining({ from: 'p1@other-bbbb', to: [me], thread: 'm3@other-bbbb', body: 'hello' })]);
    const sent = coordination.send(me, { to: ['p1@other-bbbb'], body: 'hi back', thread: 'm3@other-bbbb' });
    expect(sent.delivered).toEqual(['p1@other-bbbb']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(transport.published.at(-1)).toMatchObject({ origin: ME.id, event: { event: 'message', message: { from: me, to: ['p1@other-bbbb'], thread: 'm3@other-bbbb' } } });
  });
});
