/**
 * The gateway's config, `<root>/<local>/executor.yaml` (untracked: keys are named by environment
 * variable, never written in it). Validated strictly at the edge, then frozen: the rest of the
 * gateway trusts a `GatewayConfig`. Every problem names the file and the field path, because the
 * person reading it is fixing that file.
 *
 * The file is watched by `stat` per request and parsed only when its identity, size or mtime
 * changed; a broken file is an answer (`gateway_config`), not a crash, until it is fixed.
 */
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseYamlText } from 'yaml';
import { z } from 'zod';
import { errorMessage } from '../platform/errors.js';
import { SECRETS } from '../platform/settings.js';
import { keySchema, readKeys, type GatewayKey } from './keys.js';
import { PriceTable, pricesSchema, readPrices } from './prices.js';
import { DEFAULT_PROVIDER_KIND, PROVIDER_KINDS, type ProviderKind } from './providers/index.js';

export const CONFIG_FILE_NAME = 'executor.yaml';
/** The file is a few lines; anything larger is refused before it is parsed. */
export const MAX_CONFIG_BYTES = 256 * 1024;

export const DEFAULT_MAX_CONCURRENT = 4;
export const DEFAULT_MAX_QUEUE = 32;
export const DEFAULT_FIRST_BYTE_TIMEOUT_SECONDS = 60;
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 60;
export const DEFAULT_RETRY_AFTER_BUDGET_SECONDS = 5;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const envName = z.string().regex(ENV_NAME, 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');
const modelName = z.string().min(1, 'must not be empty').max(256).refine((name) => !/\s/.test(name), 'must hold no whitespace');

const providerSchema = z.strictObject({
  kind: z
    .string()
    .refine((kind) => PROVIDER_KINDS.has(kind), { error: `must be a provider kind: ${[...PROVIDER_KINDS.keys()].join(', ')}` })
    .default(DEFAULT_PROVIDER_KIND),
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' }),
  api_key_env: envName.optional(),
  models: z.array(modelName).min(1, 'must list at least one model (or leave models out)').optional(),
  max_concurrent: z.number().int().min(1).max(1024).default(DEFAULT_MAX_CONCURRENT),
  max_queue: z.number().int().min(0).max(100_000).default(DEFAULT_MAX_QUEUE),
  first_byte_timeout_seconds: z.number().positive().max(3600).default(DEFAULT_FIRST_BYTE_TIMEOUT_SECONDS),
  idle_timeout_seconds: z.number().positive().max(3600).default(DEFAULT_IDLE_TIMEOUT_SECONDS),
  max_output_tokens: z.number().int().min(1).max(10_000_000).optional(),
});

const priorityEntrySchema = z.strictObject({
  model: modelName,
  reasoning_effort: z.string().regex(/^[a-z_]{1,32}$/, 'must be a reasoning effort such as low, medium or high').optional(),
});

const fileSchema = z.strictObject({
  providers: z.record(z.string().regex(SLUG), providerSchema),
  routing: z
    .strictObject({
      priority_models: z.array(priorityEntrySchema).default([]),
      retry_after_budget_seconds: z.number().min(0).max(600).default(DEFAULT_RETRY_AFTER_BUDGET_SECONDS),
      claude_models: z.enum(['chain', 'strict']).default('chain'),
    })
    .default({ priority_models: [], retry_after_budget_seconds: DEFAULT_RETRY_AFTER_BUDGET_SECONDS, claude_models: 'chain' }),
  gateway: z.strictObject({ api_key_env: envName.optional(), keys: z.array(keySchema).default([]) }).default({ keys: [] }),
  prices: pricesSchema.optional(),
});

/** One upstream provider, as validated. */
export interface ProviderConfig {
  readonly slug: string;
  /** How its wire is spoken (`kind`, default `openai`). */
  readonly kind: ProviderKind;
  /** The API root, without a trailing slash (the kind says which paths under it are used). */
  readonly baseUrl: string;
  readonly apiKeyEnv: string | null;
  /** The key read from `apiKeyEnv`; null when the provider needs none. */
  readonly apiKey: string | null;
  /** False when `api_key_env` names an unset (or empty) variable: skipped in the chain. */
  readonly configured: boolean;
  /** The models it serves; null: it takes any model named `slug/model`, and lists none. */
  readonly models: readonly string[] | null;
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  readonly firstByteTimeoutMs: number;
  /** The longest gap between two chunks of a streamed answer. */
  readonly idleTimeoutMs: number;
  /** The most output tokens a request may ask of it (a larger `max_tokens` is lowered); null: no cap. */
  readonly maxOutputTokens: number | null;
}

/** One entry of the priority chain, resolved to its provider when the config was read. */
export interface ChainEntry {
  readonly provider: string;
  readonly model: string;
  readonly reasoningEffort: string | null;
}

export interface GatewayConfig {
  /** In the file's order. */
  readonly providers: ReadonlyMap<string, ProviderConfig>;
  readonly chain: readonly ChainEntry[];
  readonly retryAfterBudgetMs: number;
  /**
   * What a Messages request naming a `claude-…` model no provider serves gets (Claude Code names
   * its own models): `chain` follows the priority chain as if it named none, `strict` is refused.
   */
  readonly claudeModels: 'chain' | 'strict';
  /** The keys accepted besides the lease's token (`gateway.keys`, and `gateway.api_key_env` as `gateway`). */
  readonly keys: readonly GatewayKey[];
  /** What the models cost, or null when the file names no prices. */
  readonly prices: PriceTable | null;
}

/** Why the config cannot be used; its message names the file and the field. */
export class GatewayConfigError extends Error {
  override name = 'GatewayConfigError';
}

type Environment = Readonly<Record<string, string | undefined>>;

function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(top level)' : out;
}

/** The providers that serve `model` as a bare name, in the file's order. */
export function providersServing(providers: ReadonlyMap<string, ProviderConfig>, model: string): ProviderConfig[] {
  return [...providers.values()].filter((provider) => provider.models?.includes(model) === true);
}

/**
 * `slug/model` when `slug` is a provider (and the model one it serves, or it lists none);
 * otherwise a bare name served by a provider. Null when nothing matches.
 */
export function resolveModel(providers: ReadonlyMap<string, ProviderConfig>, name: string): { provider: ProviderConfig; model: string } | null {
  const slash = name.indexOf('/');
  if (slash > 0) {
    const provider = providers.get(name.slice(0, slash));
    const model = name.slice(slash + 1);
    if (provider && model !== '' && (provider.models === null || provider.models.includes(model))) return { provider, model };
  }
  const [provider] = providersServing(providers, name);
  return provider ? { provider, model: name } : null;
}

/** Validates a parsed YAML value; `file` (relative to the root) names the file in every message. */
export function parseGatewayConfig(value: unknown, file: string, env: Environment): GatewayConfig {
  const result = fileSchema.safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      // zod says "Invalid key in record" for a bad slug; say what a slug is.
      const message = issue.code === 'invalid_key' ? 'a provider slug is [a-z0-9][a-z0-9_-]*, at most 64 characters' : issue.message;
      return `${pathOf(issue.path)}: ${message}`;
    });
    throw new GatewayConfigError(`${file}: ${problems.join('; ')}`);
  }
  const parsed = result.data;
  const providers = new Map<string, ProviderConfig>();
  for (const [slug, provider] of Object.entries(parsed.providers)) {
    const apiKey = provider.api_key_env === undefined ? null : env[provider.api_key_env] || null;
    providers.set(slug, {
      slug,
      kind: PROVIDER_KINDS.get(provider.kind) as ProviderKind,
      baseUrl: provider.base_url.replace(/\/+$/, ''),
      apiKeyEnv: provider.api_key_env ?? null,
      apiKey,
      configured: provider.api_key_env === undefined || apiKey !== null,
      models: provider.models ?? null,
      maxConcurrent: provider.max_concurrent,
      maxQueue: provider.max_queue,
      firstByteTimeoutMs: Math.round(provider.first_byte_timeout_seconds * 1000),
      idleTimeoutMs: Math.round(provider.idle_timeout_seconds * 1000),
      maxOutputTokens: provider.max_output_tokens ?? null,
    });
  }
  const chain: ChainEntry[] = parsed.routing.priority_models.map((entry, index) => {
    const resolved = resolveModel(providers, entry.model);
    if (!resolved) {
      throw new GatewayConfigError(
        `${file}: routing.priority_models[${index}].model: no provider serves ${JSON.stringify(entry.model)} (name a model a provider lists, or slug/model)`,
      );
    }
    return { provider: resolved.provider.slug, model: resolved.model, reasoningEffort: entry.reasoning_effort ?? null };
  });
  const keys = readKeys(parsed.gateway.api_key_env, parsed.gateway.keys, providers, env);
  const prices = parsed.prices === undefined ? null : readPrices(parsed.prices, providers);
  const problems = [...keys.problems, ...(prices?.problems ?? [])];
  if (problems.length > 0) throw new GatewayConfigError(`${file}: ${problems.join('; ')}`);
  return Object.freeze({
    providers,
    chain: Object.freeze(chain),
    retryAfterBudgetMs: Math.round(parsed.routing.retry_after_budget_seconds * 1000),
    claudeModels: parsed.routing.claude_models,
    keys: Object.freeze(keys.keys),
    prices: prices?.table ?? null,
  });
}

/** Parses the file's text (YAML); `file` names it in every message. */
export function parseGatewayConfigText(text: string, file: string, env: Environment): GatewayConfig {
  let value: unknown;
  try {
    value = parseYamlText(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new GatewayConfigError(`${file}: not valid YAML: ${errorMessage(error).split('\n')[0]}`);
  }
  if (value === null || value === undefined) throw new GatewayConfigError(`${file}: the file is empty; it needs at least "providers:"`);
  return parseGatewayConfig(value, file, env);
}

export type ConfigReading = { ok: true; config: GatewayConfig } | { ok: false; message: string };

/**
 * The config file, re-read when it changes. `current()` stats the file (cheap) and parses it only
 * when its identity, size or mtime differ from the last reading.
 */
export class GatewayConfigFile {
  readonly #path: string;
  readonly #label: string;
  readonly #env: Environment;
  #fingerprint = '';
  #reading: ConfigReading | null = null;
  #loading: Promise<ConfigReading> | null = null;

  /** `path` is absolute; `label` is how messages name it (relative to the root). */
  constructor(path: string, label: string, env: Environment = SECRETS) {
    this.#path = path;
    this.#label = label;
    this.#env = env;
  }

  get label(): string {
    return this.#label;
  }

  async current(): Promise<ConfigReading> {
    // Concurrent requests share one reading.
    this.#loading ??= this.#check().finally(() => (this.#loading = null));
    return this.#loading;
  }

  async #check(): Promise<ConfigReading> {
    let fingerprint: string;
    try {
      // A synchronous stat: a few microseconds, where the thread pool's round trip added its wait
      // to every request's time to first byte.
      const info = statSync(this.#path, { bigint: true });
      if (!info.isFile()) return this.#remember(`${info.dev}:${info.ino}:dir`, { ok: false, message: `${this.#label}: is not a regular file` });
      if (info.size > BigInt(MAX_CONFIG_BYTES)) {
        return this.#remember(`${info.dev}:${info.ino}:big`, { ok: false, message: `${this.#label}: larger than ${MAX_CONFIG_BYTES} bytes` });
      }
      fingerprint = [info.dev, info.ino, info.size, info.mtimeNs, info.ctimeNs].join(':');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const message =
        code === 'ENOENT'
          ? `${this.#label}: no such file; create it to configure the gateway's providers (docs/GATEWAY.md)`
          : `${this.#label}: cannot be read: ${errorMessage(error)}`;
      return this.#remember(`missing:${code ?? ''}`, { ok: false, message });
    }
    if (this.#reading !== null && fingerprint === this.#fingerprint) return this.#reading;
    let reading: ConfigReading;
    try {
      const text = await readFile(this.#path, 'utf8');
      reading = { ok: true, config: parseGatewayConfigText(text, this.#label, this.#env) };
    } catch (error) {
      reading = { ok: false, message: error instanceof GatewayConfigError ? error.message : `${this.#label}: cannot be read: ${errorMessage(error)}` };
    }
    return this.#remember(fingerprint, reading);
  }

  #remember(fingerprint: string, reading: ConfigReading): ConfigReading {
    this.#fingerprint = fingerprint;
    this.#reading = reading;
    return reading;
  }
}
