/**
 * The owner's lease, kept in place while it serves. The lease is the only way other processes find
 * the server, so a lease that was deleted (`git clean -xfd`) or overwritten with junk is published
 * again, and a foreign lease whose server is dead is replaced. Only a valid lease naming another
 * live server supersedes this one: the owner is told, and keeps the sessions it has.
 */
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { BIND_GRACE_MS, judgeLease } from '../shared/election.js';
import { publishLease, readLease, releaseLeaseSync, republishLease, type LeaseDocument } from '../shared/lease.js';
import type { Checkout } from '../shared/locate.js';

const LEASE_WATCH_MS = 1_000;

export interface LeaseKeeperOptions {
  checkout: Checkout;
  /** The lease this server won (its `url` set once bound). */
  lease: LeaseDocument;
  /** Another live server holds the lease: this one takes no new sessions. */
  onSuperseded(): Promise<void>;
}

export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions;
  #watch: NodeJS.Timeout | null = null;
  #stopped = false;
  #checking = false;
  /** Lease writes, one at a time. */
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
  }

  /** Publishes the lease and watches it from then on; superseded at once when another took it while this server bound. */
  async publish(): Promise<void> {
    const { checkout, lease } = this.#options;
    if (!(await publishLease(checkout.leasePath, lease))) {
      await this.#superseded('the lease was taken over while this server was binding');
      return;
    }
    this.#watch = setInterval(() => void this.#check(), LEASE_WATCH_MS);
    this.#watch.unref();
  }

  /** Resolves once the lease writes under way are done. */
  async settled(): Promise<void> {
    await this.#writes;
  }

  /** Removes the lease if it is still ours; synchronous for the signal path. */
  release(): void {
    releaseLeaseSync(this.#options.checkout.leasePath, this.#options.lease.token);
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

  #stopWatching(): void {
    if (this.#watch) clearInterval(this.#watch);
    this.#watch = null;
  }

  async #superseded(why: string): Promise<void> {
    this.#stopWatching();
    log.warn(`superseded: ${why}; keeping the sessions attached here, taking no new ones`);
    await this.#options.onSuperseded();
  }
}
