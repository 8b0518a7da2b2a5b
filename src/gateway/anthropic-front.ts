/**
 * Anthropic's Messages as the client's wire (`POST /v1/messages`): Claude Code pointed at the
 * gateway with `ANTHROPIC_BASE_URL` is answered by the gateway's providers. The request is read
 * into a chat-completions body (anthropic-request.ts), routed like any other, and the answer
 * translated back — a whole one into a `message` (anthropic-answer.ts), a stream event by event
 * (anthropic-stream.ts). Errors are Anthropic's shape, `{type: "error", error: {type, message}}`,
 * with our stable `code` beside its `type`.
 *
 * Model names: Claude Code always names a model, its own (`claude-…`) unless told otherwise. A
 * `claude-…` name no provider serves follows the priority chain, as an omitted model does on the
 * OpenAI wire (`routing.claude_models: strict` refuses it instead); any other name, and a `claude-…`
 * name a provider does serve, is explicit and strict.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../platform/errors.js';
import type { HttpReply } from '../platform/http-exchange.js';
import { anthropicMessage } from './anthropic-answer.js';
import { readMessagesBody } from './anthropic-request.js';
import { AnthropicStream, anthropicErrorEvent } from './anthropic-stream.js';
import { resolveModel, type GatewayConfig } from './config.js';
import type { Front, HeaderList, WholeAnswer } from './front.js';
import type { ProviderKind } from './providers/provider.js';

export const MESSAGES_PATH = '/v1/messages';
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

/** Claude Code's own model names. */
const CLAUDE_MODEL = /^claude-/i;

/** Anthropic's error type for an HTTP status (and our code: only a full queue is `overloaded_error`). */
export function anthropicErrorType(status: number, code?: WireErrorCode): string {
  if (code === 'busy') return 'overloaded_error';
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

function errorBody(status: number, message: string, code?: WireErrorCode): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status, code), message, ...(code === undefined ? {} : { code }) } });
}

/** The gateway's own refusal in Anthropic's shape. */
export function anthropicError(code: WireErrorCode, message: string, headers: HeaderList = []): HttpReply {
  const status = WIRE_ERRORS[code].status;
  return { status, contentType: 'application/json', headers, body: errorBody(status, message, code) };
}

function wholeAnswer(answer: WholeAnswer, kind: ProviderKind, model: string): WholeAnswer {
  const text = Buffer.from(answer.body).toString('utf8');
  if (answer.status < 200 || answer.status >= 300) {
    // The provider's own refusal (a 4xx it is the client's to read): its message, in Anthropic's shape.
    return { status: answer.status, contentType: 'application/json', body: Buffer.from(errorBody(answer.status, kind.failureMessage(text))) };
  }
  let message: Record<string, unknown> | null = null;
  try {
    message = anthropicMessage(JSON.parse(text), model);
  } catch {
    // not JSON: below
  }
  if (message === null) {
    const status = WIRE_ERRORS.upstream_unavailable.status;
    return { status, contentType: 'application/json', body: Buffer.from(errorBody(status, `provider answered ${model} with something that is not a chat completion`, 'upstream_unavailable')) };
  }
  return { status: answer.status, contentType: 'application/json', body: Buffer.from(JSON.stringify(message)) };
}

export const anthropicFront: Front = {
  name: 'anthropic',
  readBody: readMessagesBody,
  routedModel(config: GatewayConfig, model: string | null): string | null {
    if (model === null) return null;
    if (config.claudeModels === 'chain' && CLAUDE_MODEL.test(model) && resolveModel(config.providers, model) === null) return null;
    return model;
  },
  error: anthropicError,
  whole: wholeAnswer,
  streamTranslator: (model) => new AnthropicStream(model),
  streamContentType: 'text/event-stream; charset=utf-8',
  streamError: (code, message) => anthropicErrorEvent(anthropicErrorType(WIRE_ERRORS[code].status, code), message, code),
};
