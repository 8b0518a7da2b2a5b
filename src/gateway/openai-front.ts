/**
 * OpenAI's chat completions as the client's wire (`POST /v1/chat/completions`): the body is
 * already what providers take, so the front reads the model and whether it streams, and passes
 * answers through byte for byte. Its errors are our `{code, message}` plus OpenAI's `type`, so
 * OpenAI clients print the message; a stream the gateway gives up on ends with that error as its
 * last event.
 */
import { WIRE_ERRORS, type WireErrorCode } from '../platform/errors.js';
import type { HttpReply } from '../platform/http-exchange.js';
import type { BodyReading, ChatBody, Front, HeaderList, WholeAnswer } from './front.js';

/** The error object of a reply body or a stream's last event. */
function errorObject(code: WireErrorCode, message: string): { error: { code: WireErrorCode; message: string; type: string } } {
  const status = WIRE_ERRORS[code].status;
  const type =
    status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { code, message, type } };
}

/** An error in our shape plus OpenAI's `type`. */
export function gatewayError(code: WireErrorCode, message: string, headers: HeaderList = []): HttpReply {
  return { status: WIRE_ERRORS[code].status, contentType: 'application/json', headers, body: JSON.stringify(errorObject(code, message)) };
}

/** The SSE event that ends a stream the gateway gives up on mid-way: `data: {"error": …}`. */
function streamErrorEvent(code: WireErrorCode, message: string): string {
  return `data: ${JSON.stringify(errorObject(code, message))}\n\n`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A parsed chat-completions body, checked; or what is wrong with it. */
function readChatBody(value: unknown): BodyReading {
  if (!isRecord(value)) return { ok: false, code: 'invalid_json', message: 'the body must be a JSON object (a chat completion request)' };
  const model = value.model;
  if (model !== undefined && model !== null && (typeof model !== 'string' || model === '')) {
    return { ok: false, code: 'invalid_input', message: 'model must be a non-empty string, or left out to follow routing.priority_models' };
  }
  const chat: ChatBody = { body: value, model: typeof model === 'string' ? model : null, stream: value.stream === true };
  return { ok: true, chat };
}

export const openaiFront: Front = {
  name: 'openai',
  readBody: readChatBody,
  routedModel: (_config, model) => model,
  error: gatewayError,
  whole: (answer: WholeAnswer) => answer,
  streamTranslator: () => null,
  streamContentType: 'text/event-stream',
  streamError: streamErrorEvent,
};
