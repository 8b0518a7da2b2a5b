/**
 * The provider kinds `providers.<slug>.kind` may name. A new kind is one module implementing
 * `ProviderKind` (provider.ts) and its line here.
 */
import { openaiProvider } from './openai.js';
import type { ProviderKind } from './provider.js';

export type { ProviderKind } from './provider.js';

/** The kind a provider is when its config names none. */
export const DEFAULT_PROVIDER_KIND = 'openai';

export const PROVIDER_KINDS: ReadonlyMap<string, ProviderKind> = new Map([[openaiProvider.name, openaiProvider]]);
