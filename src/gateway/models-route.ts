/** `GET /v1/models`: every model a configured provider serves, in OpenAI's list shape. */
import type { HttpReply } from '../platform/http-exchange.js';
import type { GatewayConfig } from './config.js';
import { listedModels } from './routing.js';

export function modelsReply(config: GatewayConfig): HttpReply {
  const data = listedModels(config).map(({ id, owned_by }) => ({ id, object: 'model', created: 0, owned_by }));
  return { status: 200, contentType: 'application/json', body: JSON.stringify({ object: 'list', data }) };
}
