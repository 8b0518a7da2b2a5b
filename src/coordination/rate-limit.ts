/**
 * A token bucket per sender: each holds up to `burst` tokens, refilled at `perSecond`; a send
 * takes one, and a sender with none is told how long until it has one. A full bucket is the same
 * as no bucket, so full ones are dropped now and then: the table stays as small as the number of
 * senders that sent lately, however many peers came and went.
 */

export interface RateLimit {
  /** Tokens a second, sustained. */
  perSecond: number;
  /** The most tokens a bucket holds: what a sender may spend at once. */
  burst: number;
}

export type Admission = { ok: true } | { ok: false; retryAfterMs: number };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (the clock's ms). */
  at: number;
}

/** Below this many buckets the table is never swept. */
const SWEEP_FLOOR = 64;

export class RateLimiter {
  readonly #limit: RateLimit;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  /** The table's size after the last sweep; the next sweep waits until it has doubled. */
  #sweptAt = SWEEP_FLOOR;

  constructor(limit: RateLimit, now: () => number = Date.now) {
    this.#limit = { ...limit };
    this.#now = now;
  }

  /** Takes one token from `sender`'s bucket, or answers how long until one is there. */
  take(sender: string): Admission {
    const now = this.#now();
    const bucket = this.#buckets.get(sender) ?? { tokens: this.#limit.burst, at: now };
    this.#refill(bucket, now);
    this.#buckets.set(sender, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.#sweep(now);
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil(((1 - bucket.tokens) * 1000) / this.#limit.perSecond)) };
  }

  get limit(): RateLimit {
    return { ...this.#limit };
  }

  /** How many senders hold a bucket: those that sent lately, and some not yet swept. */
  get tracked(): number {
    return this.#buckets.size;
  }

  #refill(bucket: Bucket, now: number): void {
    // A clock that steps back refills nothing rather than taking tokens away.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.#limit.burst, bucket.tokens + (elapsed * this.#limit.perSecond) / 1000);
    bucket.at = Math.max(bucket.at, now);
  }

  #sweep(now: number): void {
    if (this.#buckets.size < this.#sweptAt * 2) return;
    for (const [sender, bucket] of this.#buckets) {
      this.#refill(bucket, now);
      if (bucket.tokens >= this.#limit.burst) this.#buckets.delete(sender);
    }
    this.#sweptAt = Math.max(SWEEP_FLOOR, this.#buckets.size);
  }
}
