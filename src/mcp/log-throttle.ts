/**
 * The bound on what a session's log stream carries, so a storm of log lines (a provider failing on
 * every call, a watcher looping) cannot flood a client: in each window at most `burst` lines go
 * out, a line already sent in the window is not sent again, and what was held back is summed up
 * in one line when the window ends. The server's stderr keeps every line.
 */

export interface HeldBack {
  /** Lines held back in the window, repeats included. */
  held: number;
  /** Of those, lines identical to one already sent in the window. */
  repeats: number;
  /** The most severe level among them (the summary carries it, so a client at `error` hears of held errors). */
  level: string;
}

export interface LogThrottleOptions {
  burst: number;
  windowMs: number;
  /** Orders levels: the higher, the more severe. */
  severity(level: string): number;
  /** Called when a window that held lines back ends. */
  onHeldBack(summary: HeldBack): void;
  now?: () => number;
}

export class LogThrottle {
  readonly #options: LogThrottleOptions;
  readonly #now: () => number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #sent = 0;
  /** What was sent in this window (level and text), for telling repeats. */
  readonly #seen = new Set<string>();
  #held: HeldBack | null = null;
  #summary: NodeJS.Timeout | null = null;

  constructor(options: LogThrottleOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Whether a line may go out now; one that may not is counted for the window's summary. */
  admit(level: string, text: string): boolean {
    const now = this.#now();
    if (now - this.#windowStart >= this.#options.windowMs) this.#startWindow(now);
    const key = `${level}\n${text}`;
    const repeat = this.#seen.has(key);
    if (!repeat && this.#sent < this.#options.burst) {
      this.#sent += 1;
      this.#seen.add(key);
      return true;
    }
    this.#hold(level, repeat);
    return false;
  }

  /** Drops the pending summary (the session ended). Safe to call twice. */
  close(): void {
    if (this.#summary) clearTimeout(this.#summary);
    this.#summary = null;
    this.#held = null;
  }

  #startWindow(now: number): void {
    this.#flush();
    this.#windowStart = now;
    this.#sent = 0;
    this.#seen.clear();
  }

  #hold(level: string, repeat: boolean): void {
    const held = this.#held ?? { held: 0, repeats: 0, level };
    held.held += 1;
    if (repeat) held.repeats += 1;
    if (this.#options.severity(level) > this.#options.severity(held.level)) held.level = level;
    this.#held = held;
    if (this.#summary !== null) return;
    const endsIn = Math.max(0, this.#windowStart + this.#options.windowMs - this.#now());
    this.#summary = setTimeout(() => {
      this.#summary = null;
      this.#flush();
    }, endsIn);
    this.#summary.unref();
  }

  #flush(): void {
    if (this.#summary) clearTimeout(this.#summary);
    this.#summary = null;
    const held = this.#held;
    this.#held = null;
    if (held) this.#options.onHeldBack(held);
  }
}
