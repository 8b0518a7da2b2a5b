/**
 * The election (src/shared/election.ts), over a fake checkout in a temp dir and tiny HTTP servers
 * on port 0. Covers:
 * - judgeLease: an empty lease is binding while young and empty once older than the grace;
 *   a URL-less document is stale when its process is gone, binding while young with a live
 *   process and abandoned past the grace; a document whose URL does not answer is stale; one whose
 *   server names majordomus, this checkout and the lease is live; a server of another checkout or
 *   one that no longer holds the lease is stale; the token of a lease taken over is carried on;
 * - elect: wins an empty directory as owner, holding the server lock; attaches to a live server
 *   as a bridge; takes over a corrupt lease and says so on stderr; continues the peer numbers of
 *   a dead server and writes them into its own lease; gives up with LeaseUnavailable when a lease
 *   stays binding past the deadline, and leaves that lease alone; refuses a local half that is a
 *   symbolic link before writing anything (MAJ_MANIFEST_INVALID), leaving the link's target empty;
 * - the server lock: a process that finds the lease deleted or corrupt while the lock is held
 *   waits for the holder's lease and bridges to it, writing nothing; a holder that publishes no
 *   lease within the wait is taken over without the lock, saying so; a lock taken for a lease
 *   that another process created meanwhile is let go.
 */
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { elect, judgeLease, type ElectionOutcome } from '../../../src/shared/election.js';
import { LEASE_SCHEMA, LeaseUnavailable, readLease, type LeaseDocument, type LeaseReading } from '../../../src/shared/lease.js';
import type { Checkout } from '../../../src/shared/locate.js';
import { takeServerLock, type LockAttempt, type ServerLock } from '../../../src/shared/server-lock.js';

/** Above any kernel's pid_max (2^22), so no process can have it. */
const DEAD_PID = 4_194_304 + 17;
const GRACE_MS = 15_000;
const T0 = Date.parse('2025-06-01T12:00:00Z');

let dir: string;
let checkout: Checkout;
const servers: Server[] = [];
const locks: ServerLock[] = [];

/** The outcome, its lock let go after the test. */
function keeping(outcome: ElectionOutcome): ElectionOutcome {
  if (outcome.role === 'owner' && outcome.lock) locks.push(outcome.lock);
  return outcome;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'majordomus-election-'));
  checkout = { root: dir, localPath: 'local', leasePath: join(dir, 'local', 'state', 'mcp', 'server.json'), manifestFingerprint: '1:2:3:4:5' };
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const lock of locks.splice(0)) lock.release();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
  await rm(dir, { recursive: true, force: true });
});

function leaseDoc(overrides: Partial<LeaseDocument> = {}): LeaseDocument {
  return {
    schema: LEASE_SCHEMA,
    pid: process.pid,
    token: 'a'.repeat(32),
    root: dir,
    url: null,
    started_at: new Date(T0).toISOString(),
    version: '0.0.0-test',
    ...overrides,
  };
}

function documentReading(doc: LeaseDocument, modifiedMs = T0): LeaseReading {
  return { state: 'document', doc, raw: JSON.stringify(doc), modifiedMs };
}

function writeLease(text: string): void {
  mkdirSync(dirname(checkout.leasePath), { recursive: true });
  writeFileSync(checkout.leasePath, text);
}

/** A server answering `GET /` with `body`, as a majordomus root would. */
/** A server answering `GET /` like majordomus: `authorized` when the request carries `token`. */
async function rootServer(body: Record<string, unknown>, token = 'a'.repeat(32)): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...body, authorized: req.headers.authorization === `Bearer ${token}` }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The URL of a port that was just free and is closed again. */
async function closedUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return `http://127.0.0.1:${port}`;
}

describe('judgeLease', () => {
  it('finds an empty lease binding while it is younger than the grace', async () => {
    const verdict = await judgeLease({ state: 'empty', raw: '', modifiedMs: T0 }, checkout, GRACE_MS, T0 + GRACE_MS - 1);
    expect(verdict).toEqual({ kind: 'binding' });
  });

  it('finds an empty lease older than the grace empty, and says for how long', async () => {
    const verdict = await judgeLease({ state: 'empty', raw: '', modifiedMs: T0 }, checkout, GRACE_MS, T0 + 20_000);
    expect(verdict).toEqual({ kind: 'empty', detail: 'empty for 20 s', raw: '' });
  });

  it('finds a URL-less lease stale when its process is gone', async () => {
    const reading = documentReading(leaseDoc({ pid: DEAD_PID }));
    const verdict = await judgeLease(reading, checkout, GRACE_MS, T0 + 1);
    expect(verdict).toMatchObject({ kind: 'stale', raw: (reading as { raw: string }).raw });
    expect(verdict).toHaveProperty('detail', expect.stringContaining(String(DEAD_PID)));
  });

  it('finds a URL-less lease of a live process binding while young', async () => {
    const verdict = await judgeLease(documentReading(leaseDoc()), checkout, GRACE_MS, T0 + GRACE_MS - 1);
    expect(verdict).toEqual({ kind: 'binding' });
  });

  it('finds a URL-less lease of a live process abandoned past the grace', async () => {
    const previous = leaseDoc();
    const verdict = await judgeLease(documentReading(previous), checkout, GRACE_MS, T0 + 30_000);
    expect(verdict).toMatchObject({ kind: 'abandoned', previous });
    expect(verdict).toHaveProperty('detail', expect.stringContaining(`no URL 30 s after it was taken by process ${process.pid}`));
  });

  it('finds a lease whose URL does not answer stale', async () => {
    const url = await closedUrl();
    const previous = leaseDoc({ url });
    const verdict = await judgeLease(documentReading(previous), checkout, GRACE_MS, T0);
    expect(verdict).toMatchObject({ kind: 'stale', previous });
    expect(verdict).toHaveProperty('detail', expect.stringContaining(`${url} does not answer`));
  });

  it('finds a lease live when its server names majordomus, takes the lease\'s token and holds the lease', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true });
    const doc = leaseDoc({ url });
    expect(await judgeLease(documentReading(doc), checkout, GRACE_MS, T0)).toEqual({ kind: 'live', url, token: doc.token });
  });

  it('finds a lease stale when another server now answers on its port (it refuses the lease\'s token)', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true }, 'another-servers-token');
    const verdict = await judgeLease(documentReading(leaseDoc({ url })), checkout, GRACE_MS, T0);
    expect(verdict).toMatchObject({ kind: 'stale', detail: `${url} does not take this lease's token (another server)` });
  });

  it('finds a lease stale that names another checkout, without asking its server', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true });
    const verdict = await judgeLease(documentReading(leaseDoc({ url, root: '/another/checkout' })), checkout, GRACE_MS, T0);
    expect(verdict).toMatchObject({ kind: 'stale', detail: 'it names another checkout (/another/checkout)' });
  });

  it('finds a lease stale when its server no longer holds the lease', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: false });
    const verdict = await judgeLease(documentReading(leaseDoc({ url })), checkout, GRACE_MS, T0);
    expect(verdict).toMatchObject({ kind: 'stale', detail: `${url} no longer holds the lease` });
  });

  it('passes a corrupt reading on with its detail and bytes', async () => {
    const verdict = await judgeLease({ state: 'corrupt', detail: 'not JSON', raw: '{', modifiedMs: T0 }, checkout, GRACE_MS, T0);
    expect(verdict).toEqual({ kind: 'corrupt', detail: 'not JSON', raw: '{' });
  });
});

describe('elect', () => {
  it('wins an empty directory and becomes the owner of a fresh lease', async () => {
    const outcome = keeping(await elect({ checkout, version: '0.0.0-test' }));
    expect(outcome.role).toBe('owner');
    if (outcome.role !== 'owner') return;
    expect(outcome.predecessor).toEqual({ token: null });
    expect(outcome.lease).toMatchObject({ schema: LEASE_SCHEMA, pid: process.pid, root: dir, url: null, version: '0.0.0-test', manifest: '1:2:3:4:5' });
    expect(JSON.parse(readFileSync(checkout.leasePath, 'utf8'))).toEqual(outcome.lease);
    // It holds the server lock: the next attempt finds it held.
    expect(outcome.lock).not.toBeNull();
    expect((await takeServerLock(checkout.leasePath)).kind).toBe('held');
  });

  it('attaches as a bridge to the live server named by the lease', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true });
    const doc = leaseDoc({ url, pid: DEAD_PID });
    const text = JSON.stringify(doc);
    writeLease(text);
    expect(await elect({ checkout, version: '0.0.0-test' })).toEqual({ role: 'bridge', url, token: doc.token });
    expect(readFileSync(checkout.leasePath, 'utf8')).toBe(text);
  });

  it('takes over a corrupt lease and names what it found on stderr', async () => {
    writeLease('this is not a lease');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const outcome = keeping(await elect({ checkout, version: '0.0.0-test' }));
    expect(outcome.role).toBe('owner');
    const logged = stderr.mock.calls.map((call) => String(call[0])).join('');
    expect(logged).toContain(`found a corrupt lease at ${checkout.leasePath} (not JSON); taking it over`);
    const reading = await readLease(checkout.leasePath);
    expect(reading.state).toBe('document');
  });

  it('names the token of the dead server it takes over (its saved board is restored by that token)', async () => {
    const url = await closedUrl();
    const dead = leaseDoc({ url, pid: DEAD_PID });
    writeLease(JSON.stringify(dead));
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const outcome = keeping(await elect({ checkout, version: '0.0.0-test' }));
    expect(outcome).toMatchObject({ role: 'owner', predecessor: { token: dead.token } });
    const reading = await readLease(checkout.leasePath);
    expect(reading.state === 'document' && reading.doc.token).toBe(outcome.role === 'owner' && outcome.lease.token);
    expect(reading.state === 'document' && reading.doc.url).toBe(null);
  });

  it('gives up with LeaseUnavailable when a lease stays binding past the deadline, and leaves it alone', async () => {
    const text = JSON.stringify(leaseDoc({ started_at: new Date().toISOString() }));
    writeLease(text);
    const started = Date.now();
    await expect(elect({ checkout, version: '0.0.0-test', deadlineMs: 300, bindGraceMs: 600_000 })).rejects.toBeInstanceOf(LeaseUnavailable);
    // Generous for a loaded machine, yet far below the 600 s grace it would wait without a deadline.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(readFileSync(checkout.leasePath, 'utf8')).toBe(text);
  });

  it('refuses a local half that is a symbolic link before writing anything, and leaves its target empty', async () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(dir, 'local'));
    const refusal = await elect({ checkout, version: '0.0.0-test' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MajordomusError);
    expect((refusal as MajordomusError).code).toBe('MAJ_MANIFEST_INVALID');
    expect((refusal as MajordomusError).message).toContain('local.path: local is a symbolic link');
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('elect with the server lock', () => {
  /** A lock some other live process holds. */
  const heldElsewhere = async (): Promise<LockAttempt> => ({ kind: 'held', address: '@elsewhere' });

  it.each([
    ['deleted', () => undefined],
    ['overwritten with junk', () => writeLease('\u0000junk')],
  ])('waits for a live holder to publish its lease again when the lease is %s, then bridges to it', async (_what, damage) => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true });
    const doc = leaseDoc({ url });
    damage();
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // The holder publishes its lease again a moment later (as a live owner does within a second).
    setTimeout(() => writeLease(JSON.stringify(doc)), 400);
    const outcome = await elect({ checkout, version: '0.0.0-test', takeLock: heldElsewhere });
    expect(outcome).toEqual({ role: 'bridge', url, token: doc.token });
    const logged = stderr.mock.calls.map((call) => String(call[0])).join('');
    expect(logged).toContain("but this checkout's server is alive (it holds @elsewhere); waiting for its lease (5 s at most)");
    expect(logged).not.toContain('taking it over');
    expect(readFileSync(checkout.leasePath, 'utf8')).toBe(JSON.stringify(doc));
  });

  it('takes over without the lock, saying so, when its holder publishes no lease within the wait', async () => {
    writeLease('{junk');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const outcome = keeping(await elect({ checkout, version: '0.0.0-test', takeLock: heldElsewhere, liveServerWaitMs: 300 }));
    expect(outcome).toMatchObject({ role: 'owner', lock: null });
    const logged = stderr.mock.calls.map((call) => String(call[0])).join('');
    expect(logged).toContain('this checkout\'s server holds @elsewhere but published no lease within 0 s; taking over without the lock');
    expect(logged).toContain(`found a corrupt lease at ${checkout.leasePath} (not JSON); taking it over`);
  });

  it('lets go of the lock it took when another process created its lease meanwhile, and bridges to it', async () => {
    const url = await rootServer({ name: 'majordomus', leaseholder: true });
    const theirs = leaseDoc({ url });
    let released = 0;
    const takeLock = async (path: string): Promise<LockAttempt> => {
      const attempt = await takeServerLock(path);
      if (attempt.kind !== 'taken') return attempt;
      locks.push(attempt.lock);
      // Another process (one that took over without the lock) creates its lease right now.
      writeLease(JSON.stringify(theirs));
      return { kind: 'taken', lock: { address: attempt.lock.address, release: () => ((released += 1), attempt.lock.release()) } };
    };
    expect(await elect({ checkout, version: '0.0.0-test', takeLock })).toEqual({ role: 'bridge', url, token: theirs.token });
    expect(released).toBe(1);
    const again = await takeServerLock(checkout.leasePath);
    if (again.kind === 'taken') locks.push(again.lock);
    expect(again.kind).toBe('taken');
  });
});
