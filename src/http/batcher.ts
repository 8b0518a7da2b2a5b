/**
 * Gathers the calls that arrive in one turn of the event loop and hands them on together. The HTTP
 * thread sends each gathered batch to the pool as one task: under load the cost of a thread hop
 * (a message, a wake-up, a reply) is paid once per batch instead of once per request, and a lone
 * request waits only until the end of the current loop turn.
 *
 * A turn is split into at least `parallelism` batches (one per pool thread) of at most `maxBatch`
 * calls, and no more than `maxPending` calls wait at once: past that a call is answered at once
 * with the failure answer (the server is saturated).
 */

export interface BatcherOptions {
  parallelism: number;
  maxBatch: number;
  maxPending: number;
}

export class Batcher<T, R> {
  readonly #run: (items: T[]) => Promise<R[]>;
  readonly #failed: (error: unknown) => R;
  readonly #options: BatcherOptions;
  #queued: Array<{ item: T; resolve: (result: R) => void }> = [];
  #pending = 0;
  #scheduled = false;

  /**
   * `run` answers a batch in order; when it throws, rejects or answers the wrong number of
   * results, every call of the batch is answered with `failed(error)`.
   */
  constructor(run: (items: T[]) => Promise<R[]>, failed: (error: unknown) => R, options: Partial<BatcherOptions> = {}) {
    this.#run = run;
    this.#failed = failed;
    this.#options = { parallelism: 1, maxBatch: 64, maxPending: 4096, ...options };
  }

  submit(item: T): Promise<R> {
    if (this.#pending >= this.#options.maxPending) {
      return Promise.resolve(this.#failed(new Error(`${this.#pending} calls are already waiting`)));
    }
    this.#pending += 1;
    return new Promise((resolve) => {
      this.#queued.push({ item, resolve });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const queued = this.#queued;
    this.#queued = [];
    const size = Math.max(1, Math.min(this.#options.maxBatch, Math.ceil(queued.length / this.#options.parallelism)));
    for (let start = 0; start < queued.length; start += size) {
      const batch = queued.slice(start, start + size);
      const settle = (answer: (index: number) => R): void => {
        this.#pending -= batch.length;
        batch.forEach((entry, index) => entry.resolve(answer(index)));
      };
      Promise.resolve()
        .then(() => this.#run(batch.map((entry) => entry.item)))
        .then((results) => {
          if (!Array.isArray(results) || results.length !== batch.length) {
            throw new Error(`a batch of ${batch.length} calls was answered with ${Array.isArray(results) ? results.length : 'no'} results`);
          }
          settle((index) => results[index] as R);
        })
        .catch((error: unknown) => settle(() => this.#failed(error)));
    }
  }
}
