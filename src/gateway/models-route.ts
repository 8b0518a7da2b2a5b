/**
 * `GET /v1/models`: every model a configured provider serves that the caller may use. One list
 * answers both wires: OpenAI's shape (`object`, `owned_by`, `created`) with Anthropic's fields
 * beside it (`type`, `display_name`, `created_at`, `has_more`, `first_id`, `last_id`), so either
 * kind of client reads it as its own.
 */
import type { HttpReply } from '../platform/http-exchange.js';
import type { GatewayConfig } from './config.js';
import type { Caller } from './keys.js';
import { listedModels } from './routing.js';

const EPOCH = new Date(0).toISOString();

export function modelsReply(config: GatewayConfig, caller: Caller): HttpReply {
  const data = listedModels(config, caller).map(({ id, owned_by }) => ({ id, object: 'model', created: 0, owned_by, type: 'model', display_name: id, created_at: EPOCH }));
  const page = { has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  return { status: 200, contentType: 'application/json', body: JSON.stringify({ object: 'list', data, ...page }) };
}
