/**
 * A provider's concurrency cap: at most `maxConcurrent` requests hold a slot; the next
 * `maxQueue` wait in FIFO order; beyond that a request is refused at once (the caller fails over
 * or answers 503). A waiter whose client goes away leaves the queue.
 */

/** Gives the slot back; safe to call twice. */
export type Release = () => void;

export type Acquired = { ok: true; release: Release } | { ok: false; reason: 'full' | 'aborted' };

interface Waiter {
  grant(release: Release): void;
}

export class Limiter {
  #maxConcurrent: number;
  #maxQueue: number;
  #active = 0;
  readonly #queue: Waiter[] = [];

  constructor(maxConcurrent: number, maxQueue: number) {
    this.#maxConcurrent = maxConcurrent;
    this.#maxQueue = maxQueue;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** New limits (a reloaded config): a higher cap lets waiters in at once; a lower one takes effect as slots free up. */
  setLimits(maxConcurrent: number, maxQueue: number): void {
    this.#maxConcurrent = maxConcurrent;
    this.#maxQueue = maxQueue;
    this.#drain();
  }

  /** A slot now, a slot after waiting in line, or a refusal (queue full, or aborted while waiting). */
  acquire(signal?: AbortSignal): Acquired | Promise<Acquired> {
    if (signal?.aborted) return { ok: false, reason: 'aborted' };
    if (this.#active < this.#maxConcurrent && this.#queue.length === 0) {
      this.#active += 1;
      return { ok: true, release: this.#releaser() };
    }
    if (this.#queue.length >= this.#maxQueue) return { ok: false, reason: 'full' };
    return new Promise<Acquired>((resolve) => {
      const onAbort = (): void => {
        const at = this.#queue.indexOf(waiter);
        if (at !== -1) this.#queue.splice(at, 1);
        resolve({ ok: false, reason: 'aborted' });
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve({ ok: true, release });
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active -= 1;
      this.#drain();
    };
  }

  #drain(): void {
    while (this.#active < this.#maxConcurrent) {
      const next = this.#queue.shift();
      if (!next) return;
      this.#active += 1;
      next.grant(this.#releaser());
    }
  }
}
