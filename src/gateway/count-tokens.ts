/**
 * `POST /v1/messages/count_tokens`: Anthropic's token count of a Messages request, which no
 * chat-completions provider offers. The gateway answers an estimate — the characters of the
 * request as the provider would get it, a third of a token each, the rule the executor's
 * compaction counts by (src/executor/compaction.ts) — after the same checks a Messages request
 * gets (caller, body, model and the key's scope), so a client learns of a refusal here already.
 * Nothing is sent to a provider and nothing is counted as usage.
 */
import type { HttpReply, HttpRequest } from '../platform/http-exchange.js';
import type { GatewayConfig } from './config.js';
import type { Front } from './front.js';
import { readChat } from './intake.js';
import type { Caller } from './keys.js';
import { decideRoute } from './routing.js';

/** Characters per token of the estimate: generous, so a client deciding to compact does so early. */
const CHARS_PER_TOKEN = 3;

export function countTokens(request: HttpRequest, config: GatewayConfig, front: Front, caller: Caller): HttpReply {
  const read = readChat(request, front);
  if (!read.ok) return front.error(read.code, read.message);
  const decision = decideRoute(config, front.routedModel(config, read.chat.model), caller);
  if (!decision.ok) return front.error(decision.code, decision.message);
  const { messages, tools } = read.chat.body;
  const chars = JSON.stringify(messages ?? []).length + (tools === undefined ? 0 : JSON.stringify(tools).length);
  return { status: 200, contentType: 'application/json', body: JSON.stringify({ input_tokens: Math.ceil(chars / CHARS_PER_TOKEN) }) };
}
