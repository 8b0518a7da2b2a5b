/**
 * When to rebuild the layer after its files change. A burst of changes (an editor's save, a `git
 * checkout`) makes one build: it starts once nothing changed for `quietMs`, or `maxWaitMs` after
 * the burst's first change however busy it stays. One build runs at a time; changes seen while it
 * runs make exactly one more build after it.
 */

export interface RebuildSchedulerOptions {
  quietMs: number;
  maxWaitMs: number;
  /** One build; the scheduler never runs two at once. A rejection is the caller's to report. */
  build: () => Promise<void>;
}

export class RebuildScheduler {
  readonly #options: RebuildSchedulerOptions;
  #timer: NodeJS.Timeout | null = null;
  /** When the burst being waited out began (null: none). */
  #burstStart: number | null = null;
  #building: Promise<void> | null = null;
  #changedDuringBuild = false;
  #closed = false;

  constructor(options: RebuildSchedulerOptions) {
    this.#options = options;
  }

  /** Something changed. */
  poke(): void {
    if (this.#closed) return;
    if (this.#building !== null) {
      this.#changedDuringBuild = true;
      return;
    }
    const now = Date.now();
    this.#burstStart ??= now;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const delay = Math.max(0, Math.min(this.#options.quietMs, this.#burstStart + this.#options.maxWaitMs - now));
    this.#timer = setTimeout(() => this.#start(), delay);
  }

  /** No build starts after this; one under way finishes. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    return this.#building ?? Promise.resolve();
  }

  #start(): void {
    this.#timer = null;
    this.#burstStart = null;
    this.#building = this.#options
      .build()
      .catch(() => undefined)
      .then(() => {
        this.#building = null;
        if (this.#changedDuringBuild) {
          this.#changedDuringBuild = false;
          this.poke();
        }
      });
  }
}
