/**
 * The names a key's `models` and the price table use for a set of models, one grammar for both:
 * `*` (every model), `slug/*` (every model of one provider), `slug/model` (that model there) and a
 * bare `model` (that model wherever a provider serves it). Each is checked against the providers
 * when the file is read, so a typo is a config error rather than a key that silently allows
 * nothing or a price that never applies.
 */
import type { ProviderConfig } from './config.js';

/** A parsed pattern; `rank` orders them from the most general (0) to the most specific (3). */
export type ModelPattern =
  | { readonly kind: 'all'; readonly text: string; readonly rank: 0 }
  | { readonly kind: 'provider'; readonly text: string; readonly rank: 1; readonly provider: string }
  | { readonly kind: 'bare'; readonly text: string; readonly rank: 2; readonly model: string }
  | { readonly kind: 'exact'; readonly text: string; readonly rank: 3; readonly provider: string; readonly model: string };

/** What a request is routed to: a provider and its own name of the model. */
export interface RoutedModel {
  readonly provider: string;
  readonly model: string;
}

/** The pattern `text` names, or why it names nothing the providers serve. */
export function parseModelPattern(text: string, providers: ReadonlyMap<string, ProviderConfig>): ModelPattern | { error: string } {
  if (text === '*') return { kind: 'all', text, rank: 0 };
  const slash = text.indexOf('/');
  const provider = slash > 0 ? providers.get(text.slice(0, slash)) : undefined;
  if (provider) {
    const model = text.slice(slash + 1);
    if (model === '*') return { kind: 'provider', text, rank: 1, provider: provider.slug };
    if (model !== '' && (provider.models === null || provider.models.includes(model))) return { kind: 'exact', text, rank: 3, provider: provider.slug, model };
    return { error: `provider ${provider.slug} does not list ${JSON.stringify(model)} (its models: ${(provider.models ?? []).join(', ')})` };
  }
  if ([...providers.values()].some((each) => each.models?.includes(text) === true)) return { kind: 'bare', text, rank: 2, model: text };
  return { error: `no provider serves ${JSON.stringify(text)} (name a model a provider lists, slug/model, slug/* or *)` };
}

/** Whether `pattern` covers `routed`. */
export function patternMatches(pattern: ModelPattern, routed: RoutedModel): boolean {
  switch (pattern.kind) {
    case 'all':
      return true;
    case 'provider':
      return pattern.provider === routed.provider;
    case 'bare':
      return pattern.model === routed.model;
    case 'exact':
      return pattern.provider === routed.provider && pattern.model === routed.model;
  }
}
