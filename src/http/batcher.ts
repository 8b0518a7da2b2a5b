/**
 * Gathers the calls that arrive in one turn of the event loop and hands them on together. The HTTP
 * thread sends each gathered batch to the pool as one task: under load the cost of a thread hop
 * (a message, a wake-up, a reply) is paid once per batch instead of once per request, and a lone
 * request waits only until the end of the current loop turn.
 */

export class Batcher<T, R> {
  readonly #run: (items: T[]) => Promise<R[]>;
  readonly #failed: (error: unknown) => R;
  readonly #maxBatch: number;
  #pending: Array<{ item: T; resolve: (result: R) => void }> = [];
  #scheduled = false;

  /**
   * `run` answers a batch in order; when it rejects, every call of the batch is answered with
   * `failed(error)`.
   */
  constructor(run: (items: T[]) => Promise<R[]>, failed: (error: unknown) => R, maxBatch = 64) {
    this.#run = run;
    this.#failed = failed;
    this.#maxBatch = maxBatch;
  }

  submit(item: T): Promise<R> {
    return new Promise((resolve) => {
      this.#pending.push({ item, resolve });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.#maxBatch);
      this.#run(batch.map((entry) => entry.item)).then(
        (results) => batch.forEach((entry, i) => entry.resolve(results[i] as R)),
        (error: unknown) => batch.forEach((entry) => entry.resolve(this.#failed(error))),
      );
    }
  }
}
