/**
 * The worktree transport: two servers of one repository on one directory (as two worktrees share
 * git's common directory). Covers:
 * - an append expecting the ledger's current position is taken; one expecting an older position
 *   (another worktree appended in between) is refused as a conflict, and catching up delivers it;
 * - a message one publishes reaches the other, pushed by the kernel (no polling);
 * - presence: each sees the other's, and a server that stops takes its presence with it;
 * - files are 0600 in a 0700 directory.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerEntry, PresenceRecord, TransportSink } from '../../../src/board/contract.js';
import { WorktreeTransport } from '../../../src/board/worktree-transport.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

class Sink implements TransportSink {
  claims: Array<[number, LedgerEntry | null]> = [];
  messages: LedgerEntry[] = [];
  presences = new Map<string, PresenceRecord | null>();
  constructor(readonly self: string) {}
  claimRecord(seq: number, entry: LedgerEntry | null): void {
    this.claims.push([seq, entry]);
  }
  claimsReset(): void {
    this.claims = [];
  }
  message(entry: LedgerEntry): void {
    this.messages.push(entry);
  }
  presence(checkout: string, record: PresenceRecord | null): void {
    this.presences.set(checkout, record);
  }
  reachable(): void {}
  ownPresence(): PresenceRecord {
    return { v: 1, checkout: this.self, label: this.self, place: { checkout: this.self, branch: null, host: 'h' }, peers: [], at: Date.now() };
  }
  get last(): number {
    return this.claims.at(-1)?.[0] ?? 0;
  }
}

const A = '1111111111111111';
const B = '2222222222222222';
const entry = (origin: string, event: LedgerEntry['event']): LedgerEntry => ({ v: 1, origin, label: origin, event });
const release = (origin: string, id: string) => entry(origin, { event: 'release', ids: [id], reason: 'released' });

async function pair(): Promise<{ dir: string; a: WorktreeTransport; b: WorktreeTransport; sinkA: Sink; sinkB: Sink }> {
  const root = await mkdtemp(join(tmpdir(), 'majordomus-board-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const dir = join(root, 'majordomus', 'board');
  const a = new WorktreeTransport(dir, A);
  const b = new WorktreeTransport(dir, B);
  const sinkA = new Sink(A);
  const sinkB = new Sink(B);
  await a.start(sinkA);
  await b.start(sinkB);
  cleanups.push(() => a.close(), () => b.close());
  return { dir, a, b, sinkA, sinkB };
}

describe('the worktree transport', () => {
  it('takes an append at the current position and refuses one at an older position', async () => {
    const { dir, a, b, sinkA, sinkB } = await pair();
    expect(await a.appendClaim(release(A, 'c1'), sinkA.last)).toBe('granted');
    expect(sinkA.last).toBe(1);
    // B has not caught up: its append expects position 0.
    expect(await b.appendClaim(release(B, 'c2'), 0)).toBe('conflict');
    await b.catchUp();
    expect(sinkB.claims.map(([seq, e]) => [seq, e?.origin])).toEqual([[1, A]]);
    expect(await b.appendClaim(release(B, 'c2'), sinkB.last)).toBe('granted');
    await waitFor(() => sinkA.last === 2, { what: 'A to be told of B\'s append' });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'claims.jsonl'))).mode & 0o777).toBe(0o600);
  });

  it('pushes messages and presence to the other, and a stopped server takes its presence with it', async () => {
    const { a, b, sinkB } = await pair();
    await a.publish(entry(A, { event: 'message', message: { id: 'm1', thread: 'm1', from: 'p1', to: ['all'], body: 'hi', at: new Date(0).toISOString() } }));
    await waitFor(() => sinkB.messages.length === 1, { what: 'B to be told of A\'s message' });
    await a.putPresence(new Sink(A).ownPresence());
    await waitFor(() => sinkB.presences.get(A), { what: 'B to see A\'s presence' });
    await a.close();
    await waitFor(() => sinkB.presences.has(A) && sinkB.presences.get(A) === null, { what: 'A\'s presence to go' });
    void b;
  });
});
