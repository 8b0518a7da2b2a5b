/**
 * The client's side of the gateway's wire: OpenAI's API, which its routes speak. What the gateway
 * reads of a chat-completions body (the model, whether it streams), and how it words its own
 * answers — an error is our `{code, message}` plus OpenAI's `type`, so OpenAI clients print the
 * message, and a stream the gateway gives up on ends with that error as its last event.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../platform/errors.js';
import type { HttpReply } from '../platform/http-exchange.js';

/** The error object of a reply body or a stream's last event. */
function errorObject(code: WireErrorCode, message: string): { error: { code: WireErrorCode; message: string; type: string } } {
  const status = WIRE_ERRORS[code].status;
  const type =
    status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { code, message, type } };
}

/** An error in our shape plus OpenAI's `type`. */
export function gatewayError(code: WireErrorCode, message: string, headers: ReadonlyArray<readonly [string, string]> = []): HttpReply {
  return { status: WIRE_ERRORS[code].status, contentType: 'application/json', headers, body: JSON.stringify(errorObject(code, message)) };
}

/** The SSE event that ends a stream the gateway gives up on mid-way: `data: {"error": …}`. */
export function streamErrorEvent(code: WireErrorCode, message: string): string {
  return `data: ${JSON.stringify(errorObject(code, message))}\n\n`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What routing needs of a chat request. */
export interface ChatBody {
  readonly body: Readonly<Record<string, unknown>>;
  /** Null: the request names no model and follows the priority chain. */
  readonly model: string | null;
  readonly stream: boolean;
}

/** A parsed chat-completions body, checked; or what is wrong with it. */
export function readChatBody(value: unknown): { ok: true; chat: ChatBody } | { ok: false; code: WireErrorCode; message: string } {
  if (!isRecord(value)) return { ok: false, code: 'invalid_json', message: 'the body must be a JSON object (a chat completion request)' };
  const model = value.model;
  if (model !== undefined && model !== null && (typeof model !== 'string' || model === '')) {
    return { ok: false, code: 'invalid_input', message: 'model must be a non-empty string, or left out to follow routing.priority_models' };
  }
  return { ok: true, chat: { body: value, model: typeof model === 'string' ? model : null, stream: value.stream === true } };
}
