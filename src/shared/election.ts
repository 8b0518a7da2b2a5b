/**
 * The election: who serves this checkout. A process reads the lease and decides what it is; where
 * there is none it tries to create it, and the one that succeeds binds and serves:
 *
 * - live: its server answers the probe for this checkout → attach to it;
 * - binding: young, no URL yet, its process alive → wait 100 ms and look again;
 * - stale (the server does not answer, or its process is gone), corrupt (not a lease document),
 *   empty or abandoned (no URL past the bind grace) → say what was found and take it over.
 *
 * What the lease holds cannot prove that no server lives: it may have been deleted or overwritten
 * a moment ago. Only the server lock can (server-lock.ts): a process takes it before it takes the
 * lease, and one that finds it held waits for the live server's lease instead of becoming a
 * second server — for a while: a holder that publishes nothing (hung) is taken over as before.
 *
 * Whatever the file holds, the election ends within its deadline (invariant 6).
 */
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import { createLease, LeaseUnavailable, newLeaseDocument, readLease, removeLeaseIfUnchanged, type LeaseDocument, type LeaseReading } from './lease.js';
import type { Checkout } from './locate.js';
import { probe } from './probe.js';
import type { LockAttempt, ServerLock } from './server-lock.js';

export const ELECTION_DEADLINE_MS = 20_000;
export const BIND_GRACE_MS = 15_000;
const BINDING_POLL_MS = 100;

/** What an owner inherits from the server whose lease it took over. */
export interface Predecessor {
  /** The token of the lease taken over (it names that server's saved board), or null. */
  token: string | null;
}

export type ElectionOutcome =
  /** `lock`: the server lock, held for the owner's lifetime; null when taken over without it. */
  | { role: 'owner'; lease: LeaseDocument; predecessor: Predecessor; lock: ServerLock | null }
  /** `token`: the live server's bearer token, read from its 0600 lease. */
  | { role: 'bridge'; url: string; token: string };

export type Verdict =
  | { kind: 'absent' }
  | { kind: 'live'; url: string; token: string }
  | { kind: 'binding' }
  | { kind: 'stale' | 'corrupt' | 'empty' | 'abandoned'; detail: string; raw: string; previous?: LeaseDocument };

export interface ElectionOptions {
  checkout: Checkout;
  /** The version written into a new lease (this package's, read only when a lease is created). */
  version?: string;
  deadlineMs?: number;
  bindGraceMs?: number;
  /**
   * How long a process that found the lease dead but the server lock held waits for the holder's
   * lease (default settings().liveServerWaitMs: 5 s, shortened in tests). A live owner publishes it
   * again within a second or two (it checks its lease every second); one that has not after this
   * is hung, and is taken over as if the lock were free.
   */
  liveServerWaitMs?: number;
  now?: () => number;
  /** Takes the server lock (tests give another flavour or a held one). */
  takeLock?: (leasePath: string) => Promise<LockAttempt>;
}

function processIsGone(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Judges what a lease file holds right now. */
export async function judgeLease(reading: LeaseReading, checkout: Checkout, bindGraceMs: number, now: number): Promise<Verdict> {
  switch (reading.state) {
    case 'absent':
      return { kind: 'absent' };
    case 'corrupt':
      return { kind: 'corrupt', detail: reading.detail, raw: reading.raw };
    case 'empty':
      return now - reading.modifiedMs > bindGraceMs
        ? { kind: 'empty', detail: `empty for ${Math.round((now - reading.modifiedMs) / 1000)} s`, raw: '' }
        : { kind: 'binding' };
    case 'document': {
      const { doc, raw } = reading;
      if (doc.url === null) {
        if (processIsGone(doc.pid)) return { kind: 'stale', detail: `its process ${doc.pid} is gone before binding`, raw, previous: doc };
        const started = Date.parse(doc.started_at);
        const age = now - (Number.isFinite(started) ? Math.min(started, reading.modifiedMs) : reading.modifiedMs);
        return age > bindGraceMs
          ? { kind: 'abandoned', detail: `no URL ${Math.round(age / 1000)} s after it was taken by process ${doc.pid}`, raw, previous: doc }
          : { kind: 'binding' };
      }
      // A lease naming another checkout (copied here) is not this checkout's server, live or not.
      if (doc.root !== checkout.root) return { kind: 'stale', detail: `it names another checkout (${doc.root})`, raw, previous: doc };
      const answer = await probe(doc.url, doc.token);
      return answer.live ? { kind: 'live', url: doc.url, token: doc.token } : { kind: 'stale', detail: answer.why, raw, previous: doc };
    }
  }
}

/** Runs the election until this process owns the lease or has found a live server. */
export async function elect(options: ElectionOptions): Promise<ElectionOutcome> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.deadlineMs ?? ELECTION_DEADLINE_MS);
  const grace = options.bindGraceMs ?? BIND_GRACE_MS;
  const patience = options.liveServerWaitMs ?? settings().liveServerWaitMs;
  const path = options.checkout.leasePath;
  const predecessor: Predecessor = { token: null };
  let verified = false;
  /** Since when a live holder of the server lock has been waited for. */
  let waitingSince: number | null = null;
  // The lease is read first: a bridge finds its live server without writing anything (and without
  // the git call that guards writing, or the lock).
  while (now() < deadline) {
    const verdict = await judgeLease(await readLease(path), options.checkout, grace, now());
    if (verdict.kind === 'live') return { role: 'bridge', url: verdict.url, token: verdict.token };
    if (verdict.kind === 'binding') {
      await pause();
      continue;
    }
    // Nothing is written below local.path before it is known to be a real, untracked directory
    // (loaded here: a bridge never needs it, nor the git it runs).
    if (!verified) await (await import('../layer/local-half.js')).verifyLocalHalf(options.checkout.root, options.checkout.localPath);
    verified = true;
    const attempt = await (options.takeLock ?? (await import('./server-lock.js')).takeServerLock)(path);
    if (attempt.kind === 'held') {
      if (waitingSince === null) {
        waitingSince = now();
        log.info(`the lease at ${path} is ${describe(verdict)}, but this checkout's server is alive (it holds ${attempt.address}); waiting for its lease (${Math.round(patience / 1000)} s at most)`);
      }
      if (now() - waitingSince < patience) {
        await pause();
        continue;
      }
      log.warn(`this checkout's server holds ${attempt.address} but published no lease within ${Math.round(patience / 1000)} s; taking over without the lock`);
    }
    if (attempt.kind === 'unavailable') log.debug(`cannot use the server lock (${attempt.why}); electing without it`);
    const lock = attempt.kind === 'taken' ? attempt.lock : null;
    let owned = false;
    try {
      if (verdict.kind !== 'absent') {
        log.info(`found a ${verdict.kind} lease at ${path} (${verdict.detail}); taking it over`);
        // The dead server's token names its saved board, whoever removes its lease: two bridges
        // that race to take over both know whose state they carry on.
        if (verdict.previous) predecessor.token = verdict.previous.token;
        if (!(await removeLeaseIfUnchanged(path, verdict.raw))) continue;
      }
      const version = options.version ?? (await import('../platform/version.js')).VERSION;
      const doc = await newLeaseDocument(options.checkout.root, version, options.checkout.manifestFingerprint);
      if (!(await createLease(path, doc))) continue;
      owned = true;
      return { role: 'owner', lease: doc, predecessor, lock };
    } finally {
      // Whoever created the lease instead is judged next; the lock is not ours to keep meanwhile.
      if (!owned) lock?.release();
    }
  }
  throw new LeaseUnavailable(`no server could be elected within ${Math.round((options.deadlineMs ?? ELECTION_DEADLINE_MS) / 1000)} s (lease ${path})`);
}

function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, BINDING_POLL_MS));
}

/** What a lease that names no live server is, in a few words. */
function describe(verdict: Exclude<Verdict, { kind: 'live' | 'binding' }>): string {
  return verdict.kind === 'absent' ? 'gone' : `${verdict.kind} (${verdict.detail})`;
}
