/**
 * What the gateway keeps of each provider between requests and across reloads of its config: the
 * agent of its connections, its limiter (slots and queue) and the end of its cooling after a 429.
 * A provider keeps them as long as its slug stays in the file; a new base URL gets a new agent.
 */
import type { GatewayConfig } from './config.js';
import { Limiter } from './limiter.js';
import { UpstreamEndpoint } from './upstream.js';

export interface ProviderState {
  readonly baseUrl: string;
  readonly endpoint: UpstreamEndpoint;
  readonly limiter: Limiter;
  /** Epoch ms until which a 429's Retry-After keeps the provider out of the chain. */
  coolingUntil: number;
}

export class ProviderStates {
  readonly #states = new Map<string, ProviderState>();
  #synced: GatewayConfig | null = null;

  get(slug: string): ProviderState | undefined {
    return this.#states.get(slug);
  }

  /** Brings the states in line with `config` (a no-op for the config already seen). */
  sync(config: GatewayConfig): void {
    if (this.#synced === config) return;
    this.#synced = config;
    for (const slug of [...this.#states.keys()]) {
      if (!config.providers.has(slug)) this.#states.delete(slug); // in-flight requests keep their own reference
    }
    for (const provider of config.providers.values()) {
      const state = this.#states.get(provider.slug);
      state?.limiter.setLimits(provider.maxConcurrent, provider.maxQueue);
      if (state && state.baseUrl === provider.baseUrl) continue;
      this.#states.set(provider.slug, {
        baseUrl: provider.baseUrl,
        endpoint: new UpstreamEndpoint(provider.baseUrl),
        limiter: state?.limiter ?? new Limiter(provider.maxConcurrent, provider.maxQueue),
        coolingUntil: state?.coolingUntil ?? 0,
      });
    }
  }

  /** Closes every provider's kept-alive connections. */
  close(): void {
    for (const state of this.#states.values()) state.endpoint.close();
    this.#states.clear();
    this.#synced = null;
  }
}
