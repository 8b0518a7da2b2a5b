/**
 * The limit on silence between two chunks of a streamed answer (`idle_timeout_seconds`). Every
 * chunk touches it; it fires once when `ms` pass without one. While the gateway itself stops reading
 * (the client is behind) the provider is not silent, so the timer is paused and starts afresh when
 * reading resumes. One timer per stream is re-armed only when it comes due, not on every chunk.
 */
export class IdleTimer {
  readonly #ms: number;
  readonly #onIdle: () => void;
  #timer: NodeJS.Timeout | null = null;
  /** When the last chunk came (Date.now()). */
  #last = 0;
  #stopped = false;

  constructor(ms: number, onIdle: () => void) {
    this.#ms = ms;
    this.#onIdle = onIdle;
  }

  /** Starts (or restarts, after `pause`) counting from now. */
  start(): void {
    if (this.#stopped) return;
    this.#last = Date.now();
    this.#arm(this.#ms);
  }

  /** A chunk came. */
  touch(): void {
    this.#last = Date.now();
  }

  /** Not counting until `start` again. */
  pause(): void {
    this.#clear();
  }

  /** For good: it never fires after this. Safe to call twice. */
  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #arm(delay: number): void {
    this.#clear();
    this.#timer = setTimeout(() => this.#due(), delay);
    this.#timer.unref();
  }

  #due(): void {
    this.#timer = null;
    const quiet = Date.now() - this.#last;
    if (quiet < this.#ms) return this.#arm(this.#ms - quiet);
    this.#stopped = true;
    this.#onIdle();
  }

  #clear(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
