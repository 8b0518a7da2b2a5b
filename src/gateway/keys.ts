/**
 * Who calls the gateway. The lease's token is the owner's and may use every model; besides it the
 * config may name keys (`gateway.keys`, each held by an environment variable), each allowed only
 * the models it lists — HermitAgent's operator and friend keys. Every request is counted under
 * its caller's name (`lease` for the token), so usage shows who spent what.
 *
 * The secret is compared against the token and every key, each in constant time, and the
 * comparison never stops at the first match: which key a request carried does not show in the
 * time its refusal takes.
 */
import { z } from 'zod';
import { secretMatches } from '../platform/access.js';
import type { ProviderConfig } from './config.js';
import { parseModelPattern, patternMatches, type ModelPattern, type RoutedModel } from './model-patterns.js';

/** The caller's name in usage when it presented the lease's token. */
export const LEASE_CALLER_NAME = 'lease';
/** The name of the key `gateway.api_key_env` names (every model, as before keys had scopes). */
export const LEGACY_KEY_NAME = 'gateway';

const KEY_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export const keySchema = z.strictObject({
  name: z.string().regex(KEY_NAME, 'must be a key name: [a-z0-9][a-z0-9_-]*, at most 64 characters'),
  key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)'),
  models: z.array(z.string().min(1).max(300)).min(1, 'must list at least one model pattern (`*` for every model)'),
});

/** One key the gateway accepts besides the lease's token. */
export interface GatewayKey {
  readonly name: string;
  /** The variable that holds it. */
  readonly keyEnv: string;
  /** Its value; null while the variable is unset or empty (the key is then accepted nowhere). */
  readonly secret: string | null;
  /** The models it may use; null: every model. */
  readonly scope: readonly ModelPattern[] | null;
}

/** Who a request comes from. */
export interface Caller {
  readonly name: string;
  /** The models it may use; null: every model. */
  readonly scope: readonly ModelPattern[] | null;
}

export const LEASE_CALLER: Caller = Object.freeze({ name: LEASE_CALLER_NAME, scope: null });

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The keys of the config, or the problems with them (`field: message` each): a name used twice or
 * reserved, a pattern that names nothing, two keys holding the same secret (usage could not tell
 * them apart).
 */
export function readKeys(
  legacyEnv: string | undefined,
  entries: ReadonlyArray<z.infer<typeof keySchema>>,
  providers: ReadonlyMap<string, ProviderConfig>,
  env: Environment,
): { keys: GatewayKey[]; problems: string[] } {
  const keys: GatewayKey[] = [];
  const problems: string[] = [];
  if (legacyEnv !== undefined) keys.push({ name: LEGACY_KEY_NAME, keyEnv: legacyEnv, secret: env[legacyEnv] || null, scope: null });
  for (const [index, entry] of entries.entries()) {
    const field = `gateway.keys[${index}]`;
    if (entry.name === LEASE_CALLER_NAME) problems.push(`${field}.name: "${LEASE_CALLER_NAME}" is the lease's token in usage; choose another name`);
    else if (keys.some((key) => key.name === entry.name)) {
      const why = entry.name === LEGACY_KEY_NAME && legacyEnv !== undefined ? ' (gateway.api_key_env is the key named "gateway")' : '';
      problems.push(`${field}.name: ${JSON.stringify(entry.name)} is used twice${why}`);
    }
    const scope: ModelPattern[] = [];
    for (const [at, text] of entry.models.entries()) {
      const pattern = parseModelPattern(text, providers);
      if ('error' in pattern) problems.push(`${field}.models[${at}]: ${pattern.error}`);
      else scope.push(pattern);
    }
    keys.push({ name: entry.name, keyEnv: entry.key_env, secret: env[entry.key_env] || null, scope: scope.some((p) => p.kind === 'all') ? null : scope });
  }
  for (const [index, key] of keys.entries()) {
    const twin = keys.slice(0, index).find((other) => other.secret !== null && key.secret !== null && other.secret === key.secret);
    if (twin) problems.push(`gateway.keys: ${key.keyEnv} (key ${key.name}) holds the same value as ${twin.keyEnv} (key ${twin.name}); give each key its own secret`);
  }
  return { keys, problems };
}

/** The caller presenting `secret`, or null when it is neither the lease's token nor a key. */
export function identify(secret: string | null, token: string, keys: readonly GatewayKey[]): Caller | null {
  if (secret === null) return null;
  let found: Caller | null = secretMatches(secret, token) ? LEASE_CALLER : null;
  for (const key of keys) {
    // Every key is compared, even after a match.
    if (key.secret !== null && secretMatches(secret, key.secret) && found === null) found = { name: key.name, scope: key.scope };
  }
  return found;
}

/** Whether `caller` may use `routed`. */
export function mayUse(caller: Caller, routed: RoutedModel): boolean {
  return caller.scope === null || caller.scope.some((pattern) => patternMatches(pattern, routed));
}

/** The caller's models, as its config lists them (for a refusal's message). */
export function scopeText(caller: Caller): string {
  return caller.scope === null ? '*' : caller.scope.map((pattern) => pattern.text).join(', ');
}
