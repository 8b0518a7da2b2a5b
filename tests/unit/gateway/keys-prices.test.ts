/**
 * Keys and prices, as the config declares them:
 * - model patterns `*`, `slug/*`, `slug/model` and a bare name, each checked against the providers
 *   (a pattern naming nothing is a config error naming the field);
 * - keys: `gateway.api_key_env` is the key `gateway` with every model; a key's variable unset means
 *   it is accepted nowhere; a reserved or repeated name, and two keys holding one secret, are
 *   refused; the lease's token is `lease`, with every model; an unknown secret is nobody;
 * - scopes: a key may use only what its patterns cover;
 * - prices: the most specific pattern prices a request; a charge is input and output per million,
 *   and with a reference what it saved against it; a model no pattern covers has no price;
 * - routing.claude_models and providers.<slug>.max_output_tokens are read.
 */
import { describe, expect, it } from 'vitest';
import { GatewayConfigError, parseGatewayConfigText } from '../../../src/gateway/config.js';
import { identify, LEASE_CALLER, mayUse } from '../../../src/gateway/keys.js';

const FILE = '.ai/local/executor.yaml';
const PROVIDERS = 'providers:\n  local: {base_url: http://127.0.0.1:11434/v1, models: [q7, q30], max_output_tokens: 8192}\n  hosted: {base_url: https://api.example.com/v1, models: [big, q7]}\n';
const parse = (extra: string, env: Record<string, string> = {}) => parseGatewayConfigText(PROVIDERS + extra, FILE, env);
const problem = (extra: string, env: Record<string, string> = {}): string => {
  try {
    parse(extra, env);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
};

describe('gateway keys', () => {
  const env = { OLD: 'old-secret', FRIEND: 'friend-secret', LOCAL_ONLY: 'local-secret' };
  const config = parse(
    'gateway:\n  api_key_env: OLD\n  keys:\n    - {name: friend, key_env: FRIEND, models: [q7]}\n    - {name: local-only, key_env: LOCAL_ONLY, models: [local/*]}\n    - {name: exact, key_env: UNSET, models: [hosted/big]}\n',
    env,
  );

  it('reads each key with its variable, its value and its scope; the legacy key is `gateway` with every model', () => {
    expect(config.keys.map((key) => [key.name, key.keyEnv, key.secret, key.scope?.map((p) => p.text) ?? '*'])).toEqual([
      ['gateway', 'OLD', 'old-secret', '*'],
      ['friend', 'FRIEND', 'friend-secret', ['q7']],
      ['local-only', 'LOCAL_ONLY', 'local-secret', ['local/*']],
      ['exact', 'UNSET', null, ['hosted/big']],
    ]);
    expect(config.providers.get('local')?.maxOutputTokens).toBe(8192);
    expect(config.providers.get('hosted')?.maxOutputTokens).toBeNull();
  });

  it('tells the lease, each key and a stranger apart; a key whose variable is unset matches nothing', () => {
    expect(identify('the-token', 'the-token', config.keys)).toBe(LEASE_CALLER);
    expect(identify('friend-secret', 'the-token', config.keys)?.name).toBe('friend');
    expect(identify('old-secret', 'the-token', config.keys)).toMatchObject({ name: 'gateway', scope: null });
    expect(identify('stranger', 'the-token', config.keys)).toBeNull();
    expect(identify('', 'the-token', config.keys)).toBeNull();
    expect(identify(null, 'the-token', config.keys)).toBeNull();
  });

  it('lets a key use only what its patterns cover', () => {
    const caller = (name: string) => identify(env[name as keyof typeof env] ?? '', 'token', config.keys) ?? LEASE_CALLER;
    const friend = caller('FRIEND');
    const localOnly = caller('LOCAL_ONLY');
    expect([mayUse(friend, { provider: 'local', model: 'q7' }), mayUse(friend, { provider: 'hosted', model: 'q7' }), mayUse(friend, { provider: 'local', model: 'q30' })]).toEqual([true, true, false]);
    expect([mayUse(localOnly, { provider: 'local', model: 'q30' }), mayUse(localOnly, { provider: 'hosted', model: 'q7' })]).toEqual([true, false]);
    expect(mayUse(LEASE_CALLER, { provider: 'hosted', model: 'big' })).toBe(true);
  });

  it('refuses a pattern naming nothing, a reserved or repeated name, and two keys holding one secret', () => {
    expect(problem('gateway:\n  keys: [{name: k, key_env: K, models: [nothing]}]\n')).toContain('gateway.keys[0].models[0]: no provider serves "nothing"');
    expect(problem('gateway:\n  keys: [{name: k, key_env: K, models: [local/big]}]\n')).toContain('gateway.keys[0].models[0]: provider local does not list "big"');
    expect(problem('gateway:\n  keys: [{name: k, key_env: K, models: []}]\n')).toContain('gateway.keys[0].models: must list at least one model pattern');
    expect(problem('gateway:\n  keys: [{name: lease, key_env: K, models: ["*"]}]\n')).toContain('gateway.keys[0].name: "lease" is the lease\'s token');
    expect(problem('gateway:\n  api_key_env: OLD\n  keys: [{name: gateway, key_env: K, models: ["*"]}]\n')).toContain('"gateway" is used twice (gateway.api_key_env is the key named "gateway")');
    expect(problem('gateway:\n  keys: [{name: a, key_env: A, models: ["*"]}, {name: b, key_env: B, models: ["*"]}]\n', { A: 'same', B: 'same' })).toContain(
      'B (key b) holds the same value as A (key a)',
    );
    expect(problem('gateway:\n  keys: [{name: Bad Name, key_env: K, models: ["*"]}]\n')).toContain('gateway.keys[0].name: must be a key name');
  });
});

describe('prices', () => {
  it('prices a request by its most specific pattern and says what it saved against the reference', () => {
    const config = parse(
      'prices:\n  currency: EUR\n  models:\n    "*": {input_per_million: 10, output_per_million: 10}\n    local/*: {input_per_million: 0, output_per_million: 0}\n    q7: {input_per_million: 0.5, output_per_million: 1}\n    hosted/q7: {input_per_million: 0.2, output_per_million: 0.4}\n  reference: {name: sonnet, input_per_million: 3, output_per_million: 15}\n',
    );
    const prices = config.prices;
    const tokens = { prompt_tokens: 1_000_000, completion_tokens: 100_000 };
    expect(prices?.charge({ provider: 'hosted', model: 'q7' }, tokens)).toEqual({ cost: 0.24, currency: 'EUR', saved: 4.5 - 0.24, reference: 'sonnet' });
    expect(prices?.charge({ provider: 'local', model: 'q7' }, tokens)?.cost).toBeCloseTo(0.6, 12);
    expect(prices?.charge({ provider: 'local', model: 'q30' }, tokens)?.cost).toBe(0);
    expect(prices?.charge({ provider: 'hosted', model: 'big' }, tokens)?.cost).toBe(11);
  });

  it('has no price for a model no pattern covers, and defaults the currency to USD', () => {
    const config = parse('prices:\n  models:\n    local/q30: {input_per_million: 1, output_per_million: 2}\n');
    expect(config.prices?.currency).toBe('USD');
    expect(config.prices?.charge({ provider: 'local', model: 'q7' }, { prompt_tokens: 1, completion_tokens: 1 })).toBeNull();
    expect(config.prices?.charge({ provider: 'local', model: 'q30' }, { prompt_tokens: 1, completion_tokens: 1 })).toMatchObject({ saved: null, reference: null });
  });

  it('refuses a price for a model no provider serves, a negative price and a bad currency, naming the field', () => {
    expect(problem('prices:\n  models:\n    nothing: {input_per_million: 1, output_per_million: 1}\n')).toContain('prices.models.nothing: no provider serves "nothing"');
    expect(problem('prices:\n  models:\n    q7: {input_per_million: -1, output_per_million: 1}\n')).toContain('prices.models.q7.input_per_million');
    expect(problem('prices:\n  currency: dollars\n  models: {}\n')).toContain('prices.currency: must be a currency code');
  });
});

describe('routing.claude_models', () => {
  it('is chain unless the file says strict, and nothing else', () => {
    expect(parse('').claudeModels).toBe('chain');
    expect(parse('routing: {claude_models: strict}\n').claudeModels).toBe('strict');
    expect(problem('routing: {claude_models: maybe}\n')).toContain('routing.claude_models');
  });
});
