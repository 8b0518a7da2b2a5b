/**
 * A gateway request at the door: the method its path allows, the caller (the lease's token, or a
 * key of the config — which needs the config, so the config is read first and its problems are
 * told only to a caller that passed), then, for a chat request, its task header, media type and
 * body, read by the front of its wire.
 */
import { presentedSecret } from '../platform/access.js';
import type { WireErrorCode } from '../platform/errors.js';
import type { HttpReply, HttpRequest } from '../platform/http-exchange.js';
import { decodeUtf8, JsonInputError, parseJsonInput } from '../platform/json-input.js';
import type { GatewayConfig, GatewayConfigFile } from './config.js';
import type { ChatBody, Front } from './front.js';
import { identify, type Caller } from './keys.js';

export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';
export const MODELS_PATH = '/v1/models';

const TASK_ID = /^[A-Za-z0-9-]{1,64}$/;

/** What a request that passed the door is served with. */
export interface Admitted {
  ok: true;
  config: GatewayConfig;
  caller: Caller;
}

/** The config and the caller to serve a request with, or the reply that refuses it. */
export async function admit(request: HttpRequest, file: GatewayConfigFile, token: string, front: Front): Promise<Admitted | { ok: false; reply: HttpReply }> {
  const wanted = request.path === MODELS_PATH ? 'GET' : 'POST';
  if (request.method !== wanted) {
    return { ok: false, reply: front.error('method_not_allowed', `${request.method} is not allowed on ${request.path}; use ${wanted}`, [['Allow', wanted === 'GET' ? 'GET, HEAD' : 'POST']]) };
  }
  const reading = await file.current();
  const caller = identify(presentedSecret(request.authorization, request.apiKey), token, reading.ok ? reading.config.keys : []);
  if (caller === null) {
    const message =
      "send Authorization: Bearer <token> (or x-api-key: <token>): the token of the checkout's lease (.ai/local/state/mcp/server.json by default) or a key of gateway.keys";
    return { ok: false, reply: front.error('unauthorized', message, [['WWW-Authenticate', 'Bearer realm="majordomus"']]) };
  }
  if (!reading.ok) return { ok: false, reply: front.error('gateway_config', reading.message) };
  return { ok: true, config: reading.config, caller };
}

/** A chat request as the flow carries it. */
export interface ChatIntake extends ChatBody {
  /** `X-Majordomus-Task`, or null. */
  readonly task: string | null;
}

/** A chat request's task header, media type and body (read by `front`), checked; or what is wrong with them. */
export function readChat(request: HttpRequest, front: Front): { ok: true; chat: ChatIntake } | { ok: false; code: WireErrorCode; message: string } {
  if (request.task !== '' && !TASK_ID.test(request.task)) {
    return {
      ok: false,
      code: 'invalid_input',
      message: `X-Majordomus-Task must be 1 to 64 characters of A-Z, a-z, 0-9 and "-", not ${JSON.stringify(request.task.slice(0, 80))}`,
    };
  }
  if (!/^application\/json\s*(;|$)/i.test(request.contentType.trim())) {
    return { ok: false, code: 'unsupported_media_type', message: `send the body as application/json, not ${JSON.stringify(request.contentType || 'no Content-Type')}` };
  }
  let value: unknown;
  try {
    value = parseJsonInput(decodeUtf8(request.body));
  } catch (error) {
    if (error instanceof JsonInputError) return { ok: false, code: 'invalid_json', message: `the body is not usable JSON: ${error.message}` };
    throw error;
  }
  const read = front.readBody(value);
  if (!read.ok) return read;
  return { ok: true, chat: { ...read.chat, task: request.task === '' ? null : request.task } };
}
