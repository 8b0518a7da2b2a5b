/**
 * The model gateway on the HTTP thread: `POST /v1/chat/completions` (OpenAI's wire),
 * `POST /v1/messages` and `/v1/messages/count_tokens` (Anthropic's) and `GET /v1/models`, always
 * behind the lease's token or a key of the config. This is its one public entry; each job has its
 * module:
 *
 * - intake.ts — the method, the caller (keys.ts), the config, a chat request's headers and body;
 * - openai-front.ts, anthropic-front.ts — the client's wire (front.ts): reading its request,
 *   wording errors, translating answers;
 * - failover.ts — the walk along the chain; attempt.ts — one entry (cooling, slot, attempt);
 * - relay.ts — a streamed answer passed through (or translated), to its end or its idle limit;
 *   whole.ts — any other;
 * - models-route.ts — the model list; count-tokens.ts — Anthropic's token count, estimated;
 * - usage.ts — the record each request reports, with its cost (prices.ts);
 * - providers/ — each provider kind's wire; upstream.ts — the HTTP transport they share.
 */
import { errorMessage } from '../platform/errors.js';
import type { HttpRequest, RouteReply } from '../platform/http-exchange.js';
import { log } from '../platform/log.js';
import { anthropicFront, COUNT_TOKENS_PATH, MESSAGES_PATH } from './anthropic-front.js';
import type { GatewayConfigFile } from './config.js';
import { countTokens } from './count-tokens.js';
import { chat } from './failover.js';
import type { Front } from './front.js';
import { admit, CHAT_COMPLETIONS_PATH, MODELS_PATH } from './intake.js';
import { modelsReply } from './models-route.js';
import { openaiFront } from './openai-front.js';
import { ProviderStates } from './provider-states.js';
import type { UsageReport } from './usage.js';

export { CHAT_COMPLETIONS_PATH, MODELS_PATH } from './intake.js';
export { COUNT_TOKENS_PATH, MESSAGES_PATH } from './anthropic-front.js';
export { gatewayError } from './openai-front.js';
export { ROUTE_HEADER, type Failover } from './route-header.js';

/** Every path the gateway answers, and the wire each is spoken in. */
const FRONTS: ReadonlyMap<string, Front> = new Map([
  [CHAT_COMPLETIONS_PATH, openaiFront],
  [MODELS_PATH, openaiFront],
  [MESSAGES_PATH, anthropicFront],
  [COUNT_TOKENS_PATH, anthropicFront],
]);

/** The paths the HTTP thread hands to the gateway. */
export const GATEWAY_PATHS: ReadonlySet<string> = new Set(FRONTS.keys());

export interface GatewayOptions {
  config: GatewayConfigFile;
  /** The lease's token: always accepted, for every model. */
  token: string;
  /** Called once per request that reached a provider, after its answer ended. */
  report: UsageReport;
}

export class Gateway {
  readonly #options: GatewayOptions;
  readonly #providers = new ProviderStates();

  constructor(options: GatewayOptions) {
    this.#options = options;
  }

  /** Answers a request to one of the gateway's paths (`GATEWAY_PATHS`). */
  async handle(request: HttpRequest): Promise<RouteReply> {
    const front = FRONTS.get(request.path) ?? openaiFront;
    try {
      const admitted = await admit(request, this.#options.config, this.#options.token, front);
      if (!admitted.ok) return admitted.reply;
      const { config, caller } = admitted;
      this.#providers.sync(config);
      if (request.path === MODELS_PATH) return modelsReply(config, caller);
      if (request.path === COUNT_TOKENS_PATH) return countTokens(request, config, front, caller);
      return await chat(request, config, { providers: this.#providers, report: this.#options.report }, front, caller);
    } catch (error) {
      log.error(`gateway: ${errorMessage(error)}`);
      return front.error('internal', errorMessage(error));
    }
  }

  /** Closes every provider's kept-alive connections. */
  close(): void {
    this.#providers.close();
  }
}
