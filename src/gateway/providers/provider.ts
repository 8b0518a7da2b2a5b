/**
 * What the gateway needs from each kind of provider: how to send it one attempt of a chat request,
 * how to judge its answer's head (forward it, or fail over), and how to read its answers — the
 * tokens of a whole one, the usage and errors inside a streamed one. One module per kind implements
 * it (openai.ts: OpenAI-compatible chat completions) and providers/index.ts names the kinds the
 * config may choose; nothing else in the gateway knows a provider's paths, headers, error bodies or
 * stream chunks. Whatever a kind speaks upstream, its answers are chat completions (whole, or SSE
 * chunks ending with a usage chunk): that is what the client-facing fronts (../front.ts) pass on or
 * translate.
 *
 * Shared by every kind, and so not here: the HTTP transport (../upstream.ts: kept-alive agents,
 * the first-byte timeout, connection failures) and the `text/event-stream` framing of a streamed
 * answer (src/platform/sse.ts), which the gateway parses once and hands to the kind event by event.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SseEvent } from '../../platform/sse.js';

/** The tokens of one answer, as the gateway counts them. */
export interface Tokens {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Where one configured provider is reached. */
export interface ProviderTarget {
  /** The API root, without a trailing slash. */
  readonly baseUrl: string;
  /** The key read from the provider's `api_key_env`; null when it needs none. */
  readonly apiKey: string | null;
  /** `max_output_tokens`: a request asking for more output is lowered to it; null: no cap. */
  readonly maxOutputTokens: number | null;
}

/** One attempt: the client's request, sent to one entry of its chain. */
export interface UpstreamCall {
  /** The client's chat-completions body, as it sent it. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The client asked for a stream. */
  readonly stream: boolean;
  /** The provider's own name of the model. */
  readonly model: string;
  /** The chain entry's reasoning effort, when it gives one. */
  readonly reasoningEffort: string | null;
}

/** What the transport sends: a POST of `body` to `url` (its Content-Length is added). */
export interface UpstreamRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/** The head of an answer, judged. */
export type HeadVerdict =
  /** Forwarded to the client: a usable answer, or a refusal that is the client's to read. */
  | { readonly forward: true }
  /**
   * Failed over: the provider cannot answer now. `rateLimited` keeps it cooling for
   * `retryAfterMs` (when known); the body is read, bounded, for the reason.
   */
  | { readonly forward: false; readonly rateLimited: boolean; readonly retryAfterMs: number | null };

/** Reads one streamed answer as its events pass to the client. */
export interface StreamReader {
  /** One event of the answer, after its bytes were forwarded. */
  event(event: SseEvent): void;
  /** The tokens the answer reported so far, or null. */
  readonly usage: Tokens | null;
  /** The message of an error the provider reported inside the stream, or null. */
  readonly error: string | null;
}

export interface ProviderKind {
  /** As `providers.<slug>.kind` names it. */
  readonly name: string;
  /** The request of one attempt. */
  request(target: ProviderTarget, call: UpstreamCall): UpstreamRequest;
  /** Forward the answer whose head this is, or fail over (`now`: for a Retry-After date). */
  judge(status: number, headers: IncomingHttpHeaders, now: number): HeadVerdict;
  /** The readable message of a failed answer's body (its first few KiB, as text). */
  failureMessage(body: string): string;
  /** The tokens of a whole successful answer, or null when it reports none. */
  wholeUsage(body: Uint8Array): Tokens | null;
  /** A reader for one successful streamed answer. */
  streamReader(): StreamReader;
}
