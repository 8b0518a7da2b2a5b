/**
 * Which upstream a chat request may go to, and whether its caller may use it. An explicit model is
 * strict: one provider, never another model, and a clear refusal naming what is available — or,
 * for a key whose models do not include it, naming the key. An omitted model follows the priority
 * chain, without the providers whose key variable is unset and without the entries the caller's
 * key may not use. Cooling and queues are the gateway's live state, not decided here.
 */
import type { ChainEntry, GatewayConfig } from './config.js';
import { resolveModel } from './config.js';
import { mayUse, scopeText, type Caller } from './keys.js';

export type RouteDecision =
  | { ok: true; explicit: boolean; entries: readonly ChainEntry[] }
  | { ok: false; code: 'model_not_found' | 'gateway_config' | 'forbidden_model'; message: string };

/** Every model a configured provider serves that `caller` may use, as `slug/model`, in the file's order. */
export function availableModels(config: GatewayConfig, caller: Caller | null = null): string[] {
  const out: string[] = [];
  for (const provider of config.providers.values()) {
    if (!provider.configured) continue;
    for (const model of provider.models ?? []) {
      if (caller === null || mayUse(caller, { provider: provider.slug, model })) out.push(`${provider.slug}/${model}`);
    }
  }
  return out;
}

/**
 * Model ids for `GET /v1/models`: each `slug/model`, and each bare name once (the provider it
 * resolves to), of those `caller` may use.
 */
export function listedModels(config: GatewayConfig, caller: Caller | null = null): Array<{ id: string; owned_by: string }> {
  const listed: Array<{ id: string; owned_by: string }> = [];
  const bare = new Set<string>();
  for (const provider of config.providers.values()) {
    if (!provider.configured) continue;
    for (const model of provider.models ?? []) {
      if (caller !== null && !mayUse(caller, { provider: provider.slug, model })) continue;
      if (!bare.has(model)) {
        bare.add(model);
        listed.push({ id: model, owned_by: provider.slug });
      }
      listed.push({ id: `${provider.slug}/${model}`, owned_by: provider.slug });
    }
  }
  return listed;
}

function availableText(config: GatewayConfig, caller: Caller): string {
  const models = availableModels(config, caller);
  if (models.length > 0) return `available: ${models.join(', ')}`;
  return caller.scope === null ? 'no model is available (no provider is configured)' : `key ${caller.name} may use no configured model (its models: ${scopeText(caller)})`;
}

/** The entries `caller` may try for a request naming `model` (or none: the chain). */
export function decideRoute(config: GatewayConfig, model: string | null, caller: Caller): RouteDecision {
  if (model !== null) {
    const resolved = resolveModel(config.providers, model);
    if (!resolved) {
      return { ok: false, code: 'model_not_found', message: `the gateway serves no model ${JSON.stringify(model)}; ${availableText(config, caller)}` };
    }
    const { provider } = resolved;
    if (!provider.configured) {
      return {
        ok: false,
        code: 'model_not_found',
        message: `model ${JSON.stringify(model)} is served by provider ${provider.slug}, which is not configured: its key variable ${provider.apiKeyEnv} is not set in the server's environment; ${availableText(config, caller)}`,
      };
    }
    if (!mayUse(caller, { provider: provider.slug, model: resolved.model })) {
      return {
        ok: false,
        code: 'forbidden_model',
        message: `key ${caller.name} may not use model ${JSON.stringify(model)} (${provider.slug}/${resolved.model}); its models: ${scopeText(caller)}; ${availableText(config, caller)}`,
      };
    }
    return { ok: true, explicit: true, entries: [{ provider: provider.slug, model: resolved.model, reasoningEffort: null }] };
  }
  if (config.chain.length === 0) {
    return { ok: false, code: 'gateway_config', message: 'the request names no model and routing.priority_models is empty: name a model, or list the chain in the config' };
  }
  const entries = config.chain.filter((entry) => config.providers.get(entry.provider)?.configured === true);
  if (entries.length === 0) {
    const unset = [...new Set(config.chain.map((entry) => config.providers.get(entry.provider)?.apiKeyEnv ?? ''))].filter((name) => name !== '');
    return {
      ok: false,
      code: 'gateway_config',
      message: `the request names no model and no provider of routing.priority_models is configured (unset: ${unset.join(', ')})`,
    };
  }
  const allowed = entries.filter((entry) => mayUse(caller, entry));
  if (allowed.length === 0) {
    const chain = entries.map((entry) => `${entry.provider}/${entry.model}`).join(', ');
    return {
      ok: false,
      code: 'forbidden_model',
      message: `key ${caller.name} may use no model of routing.priority_models (${chain}); its models: ${scopeText(caller)}; name one of them`,
    };
  }
  return { ok: true, explicit: false, entries: allowed };
}
