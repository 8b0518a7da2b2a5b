/**
 * The election: who serves this checkout. A process reads the lease and decides what it is; where
 * there is none it tries to create it, and the one that succeeds binds and serves:
 *
 * - live: its server answers the probe for this checkout → attach to it;
 * - binding: young, no URL yet, its process alive → wait 100 ms and look again;
 * - stale (the server does not answer, or its process is gone), corrupt (not a lease document),
 *   empty or abandoned (no URL past the bind grace) → say what was found and take it over.
 *
 * Whatever the file holds, the election ends within its deadline (invariant 6).
 */
import { log } from '../platform/log.js';
import { createLease, LeaseUnavailable, newLeaseDocument, readLease, removeLeaseIfUnchanged, type LeaseDocument, type LeaseReading } from './lease.js';
import type { Checkout } from './locate.js';
import { probe } from './probe.js';

export const ELECTION_DEADLINE_MS = 20_000;
export const BIND_GRACE_MS = 15_000;
const BINDING_POLL_MS = 100;

/** What an owner inherits from the server whose lease it took over. */
export interface Predecessor {
  /** The token of the lease taken over (it names that server's saved board), or null. */
  token: string | null;
}

export type ElectionOutcome =
  | { role: 'owner'; lease: LeaseDocument; predecessor: Predecessor }
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
  now?: () => number;
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
  const path = options.checkout.leasePath;
  const predecessor: Predecessor = { token: null };
  let verified = false;
  // The lease is read first: a bridge finds its live server without writing anything (and without
  // the git call that guards writing).
  while (now() < deadline) {
    const verdict = await judgeLease(await readLease(path), options.checkout, grace, now());
    switch (verdict.kind) {
      case 'absent': {
        // Nothing is written below local.path before it is known to be a real, untracked directory
        // (loaded here: a bridge never needs it, nor the git it runs).
        if (!verified) await (await import('../layer/local-half.js')).verifyLocalHalf(options.checkout.root, options.checkout.localPath);
        verified = true;
        const version = options.version ?? (await import('../platform/version.js')).VERSION;
        const doc = await newLeaseDocument(options.checkout.root, version, options.checkout.manifestFingerprint);
        if (await createLease(path, doc)) return { role: 'owner', lease: doc, predecessor };
        continue;
      }
      case 'live':
        return { role: 'bridge', url: verdict.url, token: verdict.token };
      case 'binding':
        await new Promise((resolve) => setTimeout(resolve, BINDING_POLL_MS));
        continue;
      default:
        log.info(`found a ${verdict.kind} lease at ${path} (${verdict.detail}); taking it over`);
        // The dead server's token names its saved board, whoever removes its lease: two bridges
        // that race to take over both know whose state they carry on.
        if (verdict.previous) predecessor.token = verdict.previous.token;
        await removeLeaseIfUnchanged(path, verdict.raw);
    }
  }
  throw new LeaseUnavailable(`no server could be elected within ${Math.round((options.deadlineMs ?? ELECTION_DEADLINE_MS) / 1000)} s (lease ${path})`);
}
