/**
 * The owner's lease, kept in place while it serves. The lease is the only way other processes find
 * the server, so a lease that was deleted (`git clean -xfd`) or overwritten with junk is published
 * again, and a foreign lease whose server is dead is replaced. Meanwhile the server lock held with
 * it (src/shared/server-lock.ts) tells a newcomer that this server lives, so the newcomer waits for
 * the lease instead of becoming a second server. Only a valid lease naming another live server
 * supersedes this one: the owner is told, keeps the sessions it has and lets go of the lock.
 */
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { BIND_GRACE_MS, judgeLease } from '../shared/election.js';
import { publishLease, readLease, releaseLeaseSync, republishLease, type LeaseDocument } from '../shared/lease.js';
import type { Checkout } from '../shared/locate.js';
import { takeServerLock, type ServerLock } from '../shared/server-lock.js';

const LEASE_WATCH_MS = 1_000;

export interface LeaseKeeperOptions {
  checkout: Checkout;
  /** The lease this server won (its `url` set once bound). */
  lease: LeaseDocument;
  /** The server lock the election took; null when it took over without it (then taken later). */
  lock: ServerLock | null;
  /** Another live server holds the lease: this one takes no new sessions. */
  onSuperseded(): Promise<void>;
}

export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions;
  #watch: NodeJS.Timeout | null = null;
  #stopped = false;
  #checking = false;
  #wasSuperseded = false;
  /** Held for as long as this server may hold the lease. */
  #lock: ServerLock | null;
  /** Lease writes, one at a time. */
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
    this.#lock = options.lock;
  }

  /**
   * Publishes the lease and watches it from then on. A lease damaged while this server was binding
   * is published again at once, unless another live server holds it (then this one is superseded).
   */
  async publish(): Promise<void> {
    const { checkout, lease } = this.#options;
    const published = await publishLease(checkout.leasePath, lease);
    this.#watch = setInterval(() => void this.#check(), LEASE_WATCH_MS);
    this.#watch.unref();
    if (!published) await this.#check();
  }

  /** Resolves once the lease writes under way are done. */
  async settled(): Promise<void> {
    await this.#writes;
  }

  /** Removes the lease if it is still ours, then lets go of the lock; synchronous for the signal path. */
  release(): void {
    releaseLeaseSync(this.#options.checkout.leasePath, this.#options.lease.token);
    this.#releaseLock();
  }

  /** Stops watching: no check acts after this (the server is ending). */
  stop(): void {
    this.#stopped = true;
    this.#stopWatching();
  }

  #write(write: () => Promise<unknown>): Promise<unknown> {
    this.#writes = this.#writes.then(write).catch((error: unknown) => {
      log.warn(`cannot write the lease ${this.#options.checkout.leasePath}: ${errorMessage(error)}`);
    });
    return this.#writes;
  }

  async #check(): Promise<void> {
    if (this.#stopped || this.#checking) return;
    this.#checking = true;
    try {
      await this.#writes;
      if (this.#lock === null && !this.#wasSuperseded) await this.#takeLock();
      const { checkout, lease } = this.#options;
      const path = checkout.leasePath;
      const reading = await readLease(path).catch(() => null);
      if (reading === null || this.#stopped) return; // unreadable right now: look again next time
      if (reading.state === 'document' && reading.doc.token === lease.token) return;
      if (reading.state === 'absent' || reading.state === 'empty') {
        // A lease is only ever linked in whole, so an empty one is not another server binding.
        log.warn(`the lease ${path} is ${reading.state === 'absent' ? 'gone' : 'empty'}; publishing it again`);
        await this.#write(() => republishLease(path, lease, reading.state === 'empty' ? '' : undefined));
        return;
      }
      const verdict = await judgeLease(reading, checkout, BIND_GRACE_MS, Date.now());
      if (verdict.kind === 'live') {
        await this.#superseded(`the lease ${path} names another live server (${verdict.url})`);
      } else if (verdict.kind !== 'binding' && verdict.kind !== 'absent') {
        log.warn(`the lease ${path} is ${verdict.kind} (${verdict.detail}) while this server lives; publishing it again`);
        await this.#write(() => republishLease(path, lease, verdict.raw));
      }
    } finally {
      this.#checking = false;
    }
  }

  /** An owner elected without the lock (its holder was hung) takes it once it is free. */
  async #takeLock(): Promise<void> {
    const attempt = await takeServerLock(this.#options.checkout.leasePath);
    if (attempt.kind !== 'taken') return;
    if (this.#stopped || this.#wasSuperseded) return attempt.lock.release();
    this.#lock = attempt.lock;
    log.info(`holds this checkout's server lock ${attempt.lock.address} now`);
  }

  #releaseLock(): void {
    this.#lock?.release();
    this.#lock = null;
  }

  #stopWatching(): void {
    if (this.#watch) clearInterval(this.#watch);
    this.#watch = null;
  }

  async #superseded(why: string): Promise<void> {
    this.#wasSuperseded = true;
    this.#stopWatching();
    // The lock goes with the lease: the server that holds the lease now takes it.
    this.#releaseLock();
    log.warn(`superseded: ${why}; keeping the sessions attached here, taking no new ones`);
    await this.#options.onSuperseded();
  }
}
