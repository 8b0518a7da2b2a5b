/**
 * A front is the wire a client speaks to the gateway: OpenAI's chat completions
 * (openai-front.ts) or Anthropic's Messages (anthropic-front.ts). Behind every front the request is
 * one chat-completions flow — the same routing, keys, failover, caps and usage — and every
 * provider kind answers in chat-completions form, so a front has four jobs only: read a request
 * into a chat-completions body, say which model it routes by, word the gateway's own errors, and
 * turn a provider's answer (whole or streamed) into its wire. OpenAI's front passes answers through
 * byte for byte; only a front of another wire translates.
 */
import type { WireErrorCode } from '../platform/errors.js';
import type { HttpReply } from '../platform/http-exchange.js';
import type { SseEvent } from '../platform/sse.js';
import type { GatewayConfig } from './config.js';
import type { ProviderKind } from './providers/provider.js';

/** What routing needs of a chat request, in chat-completions form. */
export interface ChatBody {
  /** The body sent on to the provider (its kind sets the model). */
  readonly body: Readonly<Record<string, unknown>>;
  /** Null: the request names no model and follows the priority chain. */
  readonly model: string | null;
  readonly stream: boolean;
}

export type BodyReading = { ok: true; chat: ChatBody } | { ok: false; code: WireErrorCode; message: string };

/** A provider's whole answer, or what a front makes of it. */
export interface WholeAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Uint8Array;
}

/** Turns one streamed chat-completions answer into a front's events. */
export interface StreamTranslator {
  /** The text to send for one event of the provider's stream ('' for none). */
  event(event: SseEvent): string;
  /** The text that ends the client's stream after the provider's ended ('' when it was ended already). */
  end(): string;
}

export type HeaderList = ReadonlyArray<readonly [string, string]>;

export interface Front {
  readonly name: 'openai' | 'anthropic';
  /** A parsed JSON body, read as a chat-completions request; or what is wrong with it. */
  readBody(value: unknown): BodyReading;
  /** The model to route by: the one the request names, or null for the priority chain. */
  routedModel(config: GatewayConfig, model: string | null): string | null;
  /** The gateway's own refusal, in this wire's error shape. */
  error(code: WireErrorCode, message: string, headers?: HeaderList): HttpReply;
  /** A provider's whole answer as this wire's (a refusal of the provider's included); `model` answered it. */
  whole(answer: WholeAnswer, kind: ProviderKind, model: string): WholeAnswer;
  /** Null: a stream is forwarded as the provider sent it; otherwise a translator for one stream of `model`. */
  streamTranslator(model: string): StreamTranslator | null;
  /** The media type of a translated stream. */
  readonly streamContentType: string;
  /** The last event of a stream the gateway gives up on mid-way. */
  streamError(code: WireErrorCode, message: string): string;
}
