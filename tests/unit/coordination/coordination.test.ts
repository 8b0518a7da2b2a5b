/**
 * Coordination over the peer board. Covers:
 * - claims need a peer (the overseer cannot hold one); a granted overlap tells the live holder,
 *   a stale holder is not told;
 * - a check answers compactly (each claim once, paths naming ids) or, in the `paths` view, with
 *   each path's claims written out beside it;
 * - messages: "all" reaches every attached peer but the sender, an unknown recipient is
 *   not_found naming it, the overseer sends and reads its own inbox, recipients are told;
 * - notices carry the channel form with a structured fallback, and quote peer-written text;
 * - identify: a named peer, a peer found by its terminal session, several agents of one session
 *   told apart by their own process, ambiguity and strangers answered with null;
 * - the journal: a successor of the same epoch gets the claims and inbox state back, a new epoch
 *   gets the messages as history only, and both journals are readable JSON lines; whatever the
 *   epoch, a server numbers its peers past every peer id the journals name;
 * - each sender (a peer, the overseer) has its rate: past its burst a message is refused with
 *   rate_limited and the time to retry, nothing sent; others send on; a mistaken recipient costs
 *   nothing; after the time named it sends again;
 * - a successor with a small memory bound restores a long journal: inbox counts, acknowledgements,
 *   threads and search reach the oldest messages, read back from the journal.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Coordination, type MessageLimits } from '../../../src/coordination/coordination.js';
import { sessionOf } from '../../../src/platform/proc.js';
import { CapabilityError } from '../../../src/platform/errors.js';
import { PeerBoard } from '../../../src/peers/board.js';
import type { PeerNotice } from '../../../src/peers/notice.js';

const ROOT = '/work/checkout';
const client = (name: string) => ({ name, version: '1' });
const claimRequest = (paths: string[], exclusive = true) => ({ paths, intent: 'work on "it"', exclusive, ttl_seconds: 3600, proceed: false });

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ROOMY: MessageLimits = { memoryBytes: 16 * 1024 * 1024, rate: { perSecond: 1_000, burst: 1_000 } };

async function open(journalDir: string | null = null, epoch = 'e1', board = new PeerBoard(), limits: MessageLimits = ROOMY, now: () => number = Date.now) {
  const notices: PeerNotice[] = [];
  const coordination = await Coordination.open({ root: ROOT, board, epoch, journalDir, notify: (n) => notices.push(n), messageLimits: limits, now });
  cleanups.push(() => coordination.close());
  return { coordination, board, notices };
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof CapabilityError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'none';
}

describe('Coordination', () => {
  it('checks paths compactly, or with each path\'s claims written out in the paths view', async () => {
    const { coordination, board } = await open();
    const a = board.join(client('client-a'), 'stdio');
    const b = board.join(client('client-b'), 'http');
    const dir = coordination.claim(a, claimRequest(['src/a/**'], false)).claim;
    const md = coordination.claim(b, claimRequest(['**/*.md'], false)).claim;
    const paths = ['src/a/x.ts', 'src/a/README.md', 'src/b.ts'];
    expect(coordination.check(paths, 'compact')).toEqual({
      claims: [dir, md],
      paths: [
        { path: 'src/a/x.ts', claims: [dir.id] },
        { path: 'src/a/README.md', claims: [dir.id, md.id] },
        { path: 'src/b.ts', claims: [] },
      ],
    });
    expect(coordination.check(paths, 'paths')).toEqual({
      paths: [
        { path: 'src/a/x.ts', claims: [dir.id], holders: [dir] },
        { path: 'src/a/README.md', claims: [dir.id, md.id], holders: [dir, md] },
        { path: 'src/b.ts', claims: [], holders: [] },
      ],
    });
  });

  it('refuses claims without a peer and tells the live holder of an overlapped claim', async () => {
    const { coordination, board, notices } = await open();
    const a = board.join(client('client-a'), 'stdio');
    const b = board.join(client('client-b'), 'http');
    const c = board.join(client('client-c'), 'http');
    expect(codeOf(() => coordination.claim(null, claimRequest(['src'])))).toMatch(/^refused: claiming needs an MCP session/);
    coordination.claim(a, claimRequest(['src/a'], false));
    coordination.claim(c, claimRequest(['src/a/y.ts'], false));
    board.leave(c); // its claim stays (the runtime ends it), but it is stale and nobody tells it
    coordination.claim(b, claimRequest(['src/a/x.ts', 'src/a/y.ts'], false));
    expect(notices.map((n) => n.peer)).toEqual([a, a]);
    const told = notices.at(-1) as PeerNotice;
    expect(told).toMatchObject({ method: 'notifications/claude/channel', requires: 'claude/channel' });
    expect(told.params.content).toContain('Peer p2 ("client-b") claimed src/a/x.ts, src/a/y.ts shared for "work on \\"it\\""');
    expect(told.params.content).toContain('written by that peer');
    expect(told.fallback).toMatchObject({
      method: 'notifications/majordomus/claim',
      params: { event: 'overlap', claim: { id: 'c3', peer: b }, overlaps: [{ yours: 'src/a', theirs: 'src/a/x.ts' }, { yours: 'src/a', theirs: 'src/a/y.ts' }] },
    });
  });

  it('sends to peers, to all and to the overseer, refuses unknown recipients, and tells each recipient', async () => {
    const { coordination, board, notices } = await open();
    const a = board.join(client('a'), 'stdio');
    const b = board.join(client('b'), 'http');
    const c = board.join(client('c'), 'http');
    expect(codeOf(() => coordination.send(a, { to: ['p9'], body: 'x' }))).toMatch(/^not_found: no peer "p9" is attached/);
    const broadcast = coordination.send(a, { to: ['all'], body: 'hello all' });
    expect(broadcast.delivered).toEqual([b, c]);
    expect(broadcast.message).toMatchObject({ from: a, from_client: client('a'), to: ['all'] });
    const fromPerson = coordination.send(null, { to: [b, 'overseer'], body: 'from the page' });
    expect(fromPerson.message.from).toBe('overseer');
    expect(fromPerson.message.from_client).toBeUndefined();
    expect(fromPerson.delivered).toEqual([b]);
    expect(coordination.inbox(null, { unread: false, limit: 10 }).messages.map((m) => m.body)).toEqual(['from the page']);
    expect(coordination.inbox(b, { unread: false, limit: 10 }).messages.map((m) => m.body)).toEqual(['hello all', 'from the page']);
    expect(notices.map((n) => [n.peer, n.fallback?.method])).toEqual([
      [b, 'notifications/majordomus/message'],
      [c, 'notifications/majordomus/message'],
      [b, 'notifications/majordomus/message'],
    ]);
    expect(notices[0]?.params.content).toContain('Body: "hello all"');
  });

  it('identifies the asker by peer id, by terminal session, and by its own agent process among several', async () => {
    const stranger = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { detached: true, stdio: 'ignore' });
    cleanups.push(() => stranger.kill('SIGKILL'));
    const strangerPid = stranger.pid as number;
    const { coordination, board } = await open();
    const mine = sessionOf(process.pid);
    expect(mine).not.toBeNull();
    const here = board.join(client('here'), 'stdio', undefined, { chain: [process.pid], session: mine });
    const elsewhere = board.join(client('elsewhere'), 'http', undefined, { chain: [strangerPid], session: sessionOf(strangerPid) });
    expect(coordination.identify(elsewhere, undefined)).toBe(elsewhere);
    expect(coordination.identify('p99', undefined)).toBeNull();
    expect(coordination.identify(undefined, [process.pid, process.ppid])).toBe(here);
    expect(coordination.identify(undefined, [strangerPid])).toBe(elsewhere);
    expect(coordination.identify(undefined, undefined)).toBeNull();
    // A second agent in this session: only the one whose own process is among the asker's ancestors.
    const sibling = board.join(client('sibling'), 'http', undefined, { chain: [process.ppid], session: mine });
    expect(coordination.identify(undefined, [process.pid, 4_000_000])).toBe(here);
    expect(coordination.identify(undefined, [process.pid, process.ppid])).toBeNull();
    board.leave(sibling);
    expect(coordination.identify(undefined, [2_147_483_000])).toBeNull();
  });

  it('gives a successor of the same lineage the claims and inboxes back, and a new lineage the messages as history', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'majordomus-coordination-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const first = await open(dir, 'e1');
    const a = first.board.join(client('a'), 'stdio');
    const b = first.board.join(client('b'), 'http');
    first.coordination.claim(a, claimRequest(['src/a']));
    first.coordination.claim(b, claimRequest(['src/b']));
    first.coordination.release(b, undefined);
    first.coordination.send(a, { to: [b], body: 'one' });
    first.coordination.send(a, { to: [b], body: 'two' });
    first.coordination.ack(b, ['m1']);
    first.coordination.close();

    for (const name of ['claims.jsonl', 'messages.jsonl']) {
      const lines = (await readFile(join(dir, name), 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
      for (const line of lines) expect(line).toMatchObject({ at: expect.any(String), epoch: 'e1', event: expect.any(String) });
    }

    const successor = await open(dir, 'e1', new PeerBoard({ issuedBefore: 2 }));
    expect(successor.coordination.claims().map((c) => [c.id, c.peer, c.live])).toEqual([['c1', a, false]]);
    expect(successor.board.join(client('b'), 'http', b)).toBe(b);
    expect(successor.coordination.inbox(b, { unread: false, limit: 10 })).toMatchObject({ unread: 1, messages: [{ id: 'm1', acknowledged: true }, { id: 'm2', acknowledged: false }] });
    expect(successor.board.join(client('a'), 'stdio', a)).toBe(a);
    expect(successor.coordination.claims().map((c) => [c.id, c.live])).toEqual([['c1', true]]);
    successor.coordination.close();

    const fresh = await open(dir, 'e2');
    const p1 = fresh.board.join(client('x'), 'stdio');
    expect(fresh.coordination.claims()).toEqual([]);
    expect(fresh.coordination.inbox(p1, { unread: false, limit: 10 }).messages).toEqual([]);
    expect(fresh.coordination.thread('m1', 10).map((m) => m.body)).toEqual(['one']);
    expect(fresh.coordination.claim(p1, claimRequest(['x'])).claim.id).toBe('c3');
    expect(fresh.coordination.send(p1, { to: ['overseer'], body: 'three' }).message.id).toBe('m3');
  });

  it('holds each sender to its rate with rate_limited naming the retry time, sending nothing, and lets others send', async () => {
    let now = Date.parse('2026-11-30T12:00:00Z');
    const limits = { memoryBytes: 1_000_000, rate: { perSecond: 4, burst: 3 } };
    const { coordination, board, notices } = await open(null, 'e1', new PeerBoard(), limits, () => now);
    const a = board.join(client('a'), 'stdio');
    const b = board.join(client('b'), 'http');
    for (let n = 0; n < 3; n += 1) coordination.send(a, { to: [b], body: `burst ${n}` });
    expect(codeOf(() => coordination.send(a, { to: ['p9'], body: 'mistaken' }))).toMatch(/^not_found/); // costs no token
    const refused = refusalOf(() => coordination.send(a, { to: [b], body: 'one too many' }));
    expect(refused).toMatchObject({ code: 'rate_limited', retryAfterMs: 250 });
    expect(refused.message).toBe('p1 sends messages faster than 4 a second (after a burst of 3): nothing was sent; retry in 250 ms');
    expect(coordination.inbox(b, { unread: false, limit: 10 }).messages.map((m) => m.body)).toEqual(['burst 0', 'burst 1', 'burst 2']);
    expect(notices).toHaveLength(3);

    // The overseer is one sender like a peer; neither holds the other back.
    expect(coordination.send(b, { to: [a], body: 'from b' }).message.id).toBe('m4');
    for (let n = 0; n < 3; n += 1) coordination.send(null, { to: [a], body: `overseer ${n}` });
    expect(refusalOf(() => coordination.send(null, { to: [a], body: 'again' })).code).toBe('rate_limited');

    now += 250;
    expect(coordination.send(a, { to: [b], body: 'after waiting' }).message.body).toBe('after waiting');
    expect(refusalOf(() => coordination.send(a, { to: [b], body: 'too soon' })).retryAfterMs).toBe(250);
  });

  it('gives a successor with a small memory bound the whole history back, reading the oldest messages from the journal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'majordomus-coordination-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const first = await open(dir, 'e1');
    const a = first.board.join(client('a'), 'stdio');
    const b = first.board.join(client('b'), 'http');
    first.coordination.send(a, { to: [b], subject: 'the first', body: 'the oldest names the quarantined falcon' });
    for (let n = 2; n <= 60; n += 1) first.coordination.send(a, { to: [b], body: `${n} ${'ж'.repeat(2_000)}`, thread: 'm1' });
    first.coordination.ack(b, ['m2', 'm60']);
    first.coordination.close();
    // Lines edited by hand: a message without its fields, and an id out of order; both skipped.
    appendFileSync(join(dir, 'messages.jsonl'), '{"event":"message","message":null}\n{"event":"message","message":{"id":"m3","thread":"m3","body":"again","to":[],"recipients":[]}}\n');

    const tight = { memoryBytes: 20_000, rate: ROOMY.rate };
    const successor = await open(dir, 'e1', new PeerBoard({ issuedBefore: 2 }), tight);
    expect(successor.board.join(client('b'), 'http', b)).toBe(b);
    const inbox = successor.coordination.inbox(b, { unread: true, limit: 2 });
    expect([inbox.unread, inbox.messages.map((m) => m.id)]).toEqual([58, ['m58', 'm59']]);
    expect(successor.coordination.inbox(b, { unread: false, limit: 500 }).messages.slice(0, 3).map((m) => [m.id, m.acknowledged])).toEqual([
      ['m1', false],
      ['m2', true],
      ['m3', false],
    ]);
    expect(successor.coordination.thread('m1', 500)).toHaveLength(60);
    expect(successor.coordination.thread('m1', 1)[0]?.id).toBe('m60');
    expect((await successor.coordination.search('quarantined FALCON', 5)).map((m) => m.id)).toEqual(['m1']);
    expect(successor.coordination.ack(b, ['m1'])).toEqual(['m1']);
    expect(successor.coordination.send(b, { to: ['overseer'], body: 'next' }).message.id).toBe('m61');
    successor.coordination.close();

    const third = await open(dir, 'e1', new PeerBoard({ issuedBefore: 2 }), tight);
    expect(third.coordination.inbox(b, { unread: false, limit: 1 }).unread).toBe(57);
  });

  it('numbers its peers past every peer id the journals name, in any lineage', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'majordomus-coordination-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const first = await open(dir, 'e1', new PeerBoard({ issuedBefore: 4 }));
    const claimer = first.board.join(client('claimer'), 'stdio');
    const reader = first.board.join(client('reader'), 'http');
    const writer = first.board.join(client('writer'), 'http');
    first.coordination.claim(claimer, claimRequest(['src']));
    first.coordination.send(writer, { to: [reader], body: 'hello' });
    first.coordination.close();
    expect([claimer, reader, writer]).toEqual(['p5', 'p6', 'p7']);

    // Another lineage (a fresh server, or a second one that did not take this one's lease over).
    const fresh = await open(dir, 'e2');
    expect(fresh.board.join(client('newcomer'), 'stdio')).toBe('p8');
    expect(fresh.coordination.claims()).toEqual([]);
  });
});

function refusalOf(run: () => unknown): CapabilityError {
  try {
    run();
  } catch (error) {
    if (error instanceof CapabilityError) return error;
    throw error;
  }
  throw new Error('not refused');
}
