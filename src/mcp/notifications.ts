/**
 * The notifications of a session that belong to no request: where they go (the stream a transport
 * attached — stdout on stdio, the `GET /mcp` stream over HTTP) and which the client hears (one
 * that needs an experimental capability only when the client declared it at initialize).
 */
import type { NotificationSink } from './request.js';

export class SessionStream {
  #sink: NotificationSink | null = null;
  /** The experimental capabilities the client declared at initialize (`claude/channel`…). */
  #experimental: ReadonlySet<string> = new Set();
  #closed = false;

  /** Attaches the stream (replacing any other); answers a detach that only detaches this sink. */
  attach(sink: NotificationSink): () => void {
    this.#sink = sink;
    return () => {
      if (this.#sink === sink) this.#sink = null;
    };
  }

  /** What the client declared at initialize. */
  declare(experimental: Iterable<string>): void {
    this.#experimental = new Set(experimental);
  }

  /** Sends on the stream; false when none is attached, or when it `requires` what the client did not declare. */
  send(method: string, params?: Record<string, unknown>, requires: string | null = null): boolean {
    const sink = this.#sink;
    if (sink === null || this.#closed) return false;
    if (requires !== null && !this.#experimental.has(requires)) return false;
    sink(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
    return true;
  }

  /** Detaches the stream for good. */
  close(): void {
    this.#closed = true;
    this.#sink = null;
  }
}
