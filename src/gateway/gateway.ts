/**
 * The model gateway on the HTTP thread: `POST /v1/chat/completions` and `GET /v1/models`, OpenAI's
 * wire rather than ours, always behind the lease's token (or the configured gateway key). This is
 * its one public entry; each job has its module:
 *
 * - intake.ts — the method, the bearer, the config, a chat request's headers and body;
 * - failover.ts — the walk along the chain; attempt.ts — one entry (cooling, slot, attempt);
 * - relay.ts — a streamed answer passed through, to its end or its idle limit; whole.ts — any other;
 * - models-route.ts — the model list; usage.ts — the record each request reports;
 * - providers/ — each provider kind's wire; upstream.ts — the HTTP transport they share.
 */
import { errorMessage } from '../platform/errors.js';
import type { HttpRequest, RouteReply } from '../platform/http-exchange.js';
import { log } from '../platform/log.js';
import type { GatewayConfigFile } from './config.js';
import { chat } from './failover.js';
import { admit, MODELS_PATH } from './intake.js';
import { modelsReply } from './models-route.js';
import { gatewayError } from './openai-front.js';
import { ProviderStates } from './provider-states.js';
import type { UsageReport } from './usage.js';

export { CHAT_COMPLETIONS_PATH, MODELS_PATH } from './intake.js';
export { gatewayError } from './openai-front.js';
export { ROUTE_HEADER, type Failover } from './route-header.js';

export interface GatewayOptions {
  config: GatewayConfigFile;
  /** The lease's token: always accepted. */
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

  /** Answers a request to one of the gateway's paths (`CHAT_COMPLETIONS_PATH`, `MODELS_PATH`). */
  async handle(request: HttpRequest): Promise<RouteReply> {
    try {
      const admitted = await admit(request, this.#options.config, this.#options.token);
      if (!admitted.ok) return admitted.reply;
      this.#providers.sync(admitted.config);
      if (request.path === MODELS_PATH) return modelsReply(admitted.config);
      return await chat(request, admitted.config, { providers: this.#providers, report: this.#options.report });
    } catch (error) {
      log.error(`gateway: ${errorMessage(error)}`);
      return gatewayError('internal', errorMessage(error));
    }
  }

  /** Closes every provider's kept-alive connections. */
  close(): void {
    this.#providers.close();
  }
}
