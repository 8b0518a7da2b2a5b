/**
 * The live page's feed, independent of the server library: each open page is a `LiveSocket`; it
 * says hello with the lease's token, then gets the whole state, then each change as it happens.
 *
 * Changes are coalesced, never polled: a `changed(part)` marks that part stale and schedules one
 * build a few milliseconds later; a change arriving while a build is under way schedules one more
 * after it. Nothing is built while no page is open. A page whose socket is backed up is skipped
 * and gets the whole state once it drains (it never reads a stale part as current).
 */
import { timingSafeEqual } from 'node:crypto';
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { PageHarnessState, PageHostState } from './state.js';

/** Most page sockets at once (a person has a few tabs; more is a leak or an attack). */
export const MAX_PAGE_SOCKETS = 16;
/** The largest frame a page may send (a hello with a token is ~100 bytes). */
export const MAX_FRAME_BYTES = 4096;
/** A socket that has not said a valid hello within this is closed. */
export const HELLO_TIMEOUT_MS = 10_000;
/** How long a change waits for the next ones before the state is built again. */
export const COALESCE_MS = 10;
/**
 * Builds start at least this far apart: under constant churn (a busy board) the main thread
 * answers at most 25 state reads a second, and a change still reaches the page within ~50 ms.
 */
export const MIN_BUILD_INTERVAL_MS = 40;
/** A socket holding more unsent bytes than this is skipped until it drains. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** WebSocket close codes the feed uses. */
export const CLOSE = { normal: 1000, going: 1001, policy: 1008, tooBig: 1009, overloaded: 1013 } as const;

export type FeedErrorCode = 'unauthorized' | 'invalid_json' | 'invalid_message' | 'binary_frame' | 'hello_timeout';

/** What the server library offers for one socket. */
export interface LiveSocket {
  /** False when the text was queued behind backpressure (it is still sent). */
  send(text: string): boolean;
  bufferedAmount(): number;
  /** Closes with a code and a short reason. */
  end(code: number, reason: string): void;
}

/** What the feed answers for one socket: the library calls these. */
export interface LiveConnection {
  /** A frame from the page; `null` for a binary frame. */
  message(text: string | null): void;
  drained(): void;
  closed(): void;
}

/** The HTTP thread's own part of the state. */
export interface PageServerState {
  name: 'majordomus';
  version: string;
  repository_id: string;
  leaseholder: boolean;
  url: string;
  docs: string;
}

export type FeedPart = 'server' | 'host' | 'harness';

export interface LiveFeedOptions {
  token: string;
  server(): PageServerState;
  host(): Promise<PageHostState>;
  /** Null when this server has no harness thread. */
  harness: (() => Promise<PageHarnessState>) | null;
  coalesceMs?: number;
  minBuildIntervalMs?: number;
  helloTimeoutMs?: number;
}

interface Page {
  socket: LiveSocket;
  authorized: boolean;
  /** Gets the whole state at the next build (new, or skipped while backed up). */
  needsWhole: boolean;
  helloTimer: NodeJS.Timeout | null;
}

interface Parts {
  server: PageServerState | null;
  host: PageHostState | null;
  harness: PageHarnessState | null;
}

function tokenMatches(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class LiveFeed {
  readonly #options: LiveFeedOptions;
  readonly #pages = new Set<Page>();
  readonly #stale = new Set<FeedPart>(['server', 'host', 'harness']);
  readonly #parts: Parts = { server: null, host: null, harness: null };
  #timer: NodeJS.Timeout | null = null;
  #building = false;
  #again = false;
  #closed = false;
  /** When the last build started (performance.now()). */
  #lastBuild = Number.NEGATIVE_INFINITY;

  constructor(options: LiveFeedOptions) {
    this.#options = options;
  }

  /** How many pages are open. */
  get size(): number {
    return this.#pages.size;
  }

  /** Whether another page may open (checked before the upgrade). */
  get full(): boolean {
    return this.#closed || this.#pages.size >= MAX_PAGE_SOCKETS;
  }

  open(socket: LiveSocket): LiveConnection {
    const page: Page = { socket, authorized: false, needsWhole: false, helloTimer: null };
    if (this.full) {
      socket.end(CLOSE.overloaded, 'too many live pages are open');
      return { message: () => undefined, drained: () => undefined, closed: () => undefined };
    }
    this.#pages.add(page);
    page.helloTimer = setTimeout(() => {
      this.#refuse(page, 'hello_timeout', `send {"type":"hello","token":"…"} within ${this.#options.helloTimeoutMs ?? HELLO_TIMEOUT_MS} ms of opening`, CLOSE.policy);
    }, this.#options.helloTimeoutMs ?? HELLO_TIMEOUT_MS);
    page.helloTimer.unref();
    return {
      message: (text) => this.#message(page, text),
      drained: () => {
        if (page.needsWhole && page.authorized) this.#schedule();
      },
      closed: () => this.#forget(page),
    };
  }

  /** Something the page shows changed: its part is built again shortly, if a page is open. */
  changed(part: FeedPart): void {
    this.#stale.add(part);
    if ([...this.#pages].some((p) => p.authorized)) this.#schedule();
  }

  /** Closes every page (the server is stopping: the pages say it went away). */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    for (const page of [...this.#pages]) {
      this.#forget(page);
      page.socket.end(CLOSE.going, 'the server is stopping');
    }
  }

  #message(page: Page, text: string | null): void {
    if (text === null) return this.#error(page, 'binary_frame', 'send text frames (JSON), not binary');
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.#error(page, 'invalid_json', 'a frame must be a JSON object such as {"type":"hello","token":"…"}');
    }
    const type = typeof frame === 'object' && frame !== null && !Array.isArray(frame) ? (frame as { type?: unknown }).type : undefined;
    if (type === 'hello') {
      if (!tokenMatches((frame as { token?: unknown }).token, this.#options.token)) {
        // A wrong token ends the socket: the page asks the person again (after a takeover the
        // token changes with the lease).
        return this.#refuse(page, 'unauthorized', 'the token is not this server\'s: `majordomus open` in the checkout prints the page\'s address with the token', CLOSE.policy);
      }
      if (page.authorized) return this.#error(page, 'invalid_message', 'this page has said hello already');
      page.authorized = true;
      if (page.helloTimer) clearTimeout(page.helloTimer);
      page.helloTimer = null;
      page.needsWhole = true;
      this.#schedule();
      return;
    }
    if (type === 'ping') {
      if (!page.authorized) return this.#error(page, 'unauthorized', 'say hello with the token first');
      this.#send(page, { type: 'pong' });
      return;
    }
    this.#error(page, 'invalid_message', `unknown frame type ${JSON.stringify(type ?? null)}: the page sends "hello" (and "ping")`);
  }

  #schedule(): void {
    if (this.#closed) return;
    if (this.#building) {
      this.#again = true;
      return;
    }
    if (this.#timer) return;
    const spacing = this.#lastBuild + (this.#options.minBuildIntervalMs ?? MIN_BUILD_INTERVAL_MS) - performance.now();
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#build();
    }, Math.max(this.#options.coalesceMs ?? COALESCE_MS, spacing));
  }

  async #build(): Promise<void> {
    const readers = [...this.#pages].filter((p) => p.authorized);
    if (readers.length === 0 || this.#closed) return;
    this.#building = true;
    this.#lastBuild = performance.now();
    const built = new Set<FeedPart>();
    try {
      const wanted = new Set(this.#stale);
      for (const part of ['server', 'host', 'harness'] as const) if (this.#parts[part] === null && (part !== 'harness' || this.#options.harness)) wanted.add(part);
      this.#stale.clear();
      const [host, harness] = await Promise.all([
        wanted.has('host') ? this.#read('host', () => this.#options.host()) : null,
        wanted.has('harness') && this.#options.harness ? this.#read('harness', this.#options.harness) : null,
      ]);
      if (host) {
        this.#parts.host = host;
        built.add('host');
      }
      if (harness) {
        this.#parts.harness = harness;
        built.add('harness');
      }
      // The server part is cheap and carries the leaseholder: always current.
      this.#parts.server = this.#options.server();
      if (wanted.has('server')) built.add('server');
    } finally {
      this.#building = false;
    }
    if (this.#closed) return;
    for (const page of [...this.#pages]) {
      if (!page.authorized) continue;
      if (page.socket.bufferedAmount() > MAX_BUFFERED_BYTES) {
        page.needsWhole = true; // backed up: the whole state once it drains
        continue;
      }
      if (page.needsWhole) {
        page.needsWhole = false;
        this.#send(page, { type: 'state', ...this.#parts });
      } else if (built.size > 0) {
        const update: Record<string, unknown> = { type: 'update' };
        for (const part of built) update[part] = this.#parts[part];
        this.#send(page, update);
      }
    }
    if (this.#again) {
      this.#again = false;
      this.#schedule();
    }
  }

  /** A part, or null (kept stale, the previous one stays shown) when its thread did not answer. */
  async #read<T>(part: FeedPart, read: () => Promise<T>): Promise<T | null> {
    try {
      return await read();
    } catch (error) {
      log.warn(`the live page's ${part} state could not be read: ${errorMessage(error)}`);
      this.#stale.add(part);
      return null;
    }
  }

  #send(page: Page, frame: Record<string, unknown>): void {
    if (this.#pages.has(page)) page.socket.send(JSON.stringify(frame));
  }

  #error(page: Page, code: FeedErrorCode, message: string): void {
    this.#send(page, { type: 'error', code, message });
  }

  #refuse(page: Page, code: FeedErrorCode, message: string, closeCode: number): void {
    if (!this.#pages.has(page)) return;
    this.#error(page, code, message);
    this.#forget(page);
    page.socket.end(closeCode, code);
  }

  #forget(page: Page): void {
    if (page.helloTimer) clearTimeout(page.helloTimer);
    page.helloTimer = null;
    this.#pages.delete(page);
  }
}
