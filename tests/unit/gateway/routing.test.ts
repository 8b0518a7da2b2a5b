/**
 * Routing decisions: an explicit model is one entry on one provider or a refusal naming it and
 * what is available (or the unset key variable); an omitted model is the chain without the
 * unconfigured providers, or a gateway_config refusal when nothing is left.
 */
import { describe, expect, it } from 'vitest';
import { parseGatewayConfigText } from '../../../src/gateway/config.js';
import { LEASE_CALLER } from '../../../src/gateway/keys.js';
import { decideRoute, listedModels } from '../../../src/gateway/routing.js';

const config = parseGatewayConfigText(
  [
    'providers:',
    '  local: {base_url: http://127.0.0.1:11434/v1, models: ["qwen3-coder:30b", shared]}',
    '  hosted: {base_url: https://api.example.com/v1, api_key_env: HOSTED_KEY, models: [m-large, shared]}',
    'routing:',
    '  priority_models: [{model: hosted/m-large, reasoning_effort: high}, {model: "qwen3-coder:30b"}]',
  ].join('\n'),
  'executor.yaml',
  {},
);

describe('routing decisions', () => {
  it('routes an explicit model to exactly one provider, bare or slug/model', () => {
    expect(decideRoute(config, 'shared', LEASE_CALLER)).toEqual({ ok: true, explicit: true, entries: [{ provider: 'local', model: 'shared', reasoningEffort: null }] });
    expect(decideRoute(config, 'local/qwen3-coder:30b', LEASE_CALLER)).toEqual({
      ok: true,
      explicit: true,
      entries: [{ provider: 'local', model: 'qwen3-coder:30b', reasoningEffort: null }],
    });
  });

  it('refuses an unknown model naming it and listing only what is available', () => {
    expect(decideRoute(config, 'gpt-9', LEASE_CALLER)).toEqual({
      ok: false,
      code: 'model_not_found',
      message: 'the gateway serves no model "gpt-9"; available: local/qwen3-coder:30b, local/shared',
    });
  });

  it('refuses a model on an unconfigured provider naming its variable', () => {
    const decision = decideRoute(config, 'hosted/m-large', LEASE_CALLER);
    expect(decision).toMatchObject({ ok: false, code: 'model_not_found' });
    expect(!decision.ok && decision.message).toContain('HOSTED_KEY is not set');
  });

  it('follows the chain without the unconfigured providers', () => {
    expect(decideRoute(config, null, LEASE_CALLER)).toEqual({ ok: true, explicit: false, entries: [{ provider: 'local', model: 'qwen3-coder:30b', reasoningEffort: null }] });
    const withKey = parseGatewayConfigText(
      'providers:\n  hosted: {base_url: https://api.example.com/v1, api_key_env: HOSTED_KEY, models: [m-large]}\nrouting: {priority_models: [{model: m-large, reasoning_effort: high}]}\n',
      'executor.yaml',
      { HOSTED_KEY: 'k' },
    );
    expect(decideRoute(withKey, null, LEASE_CALLER)).toEqual({ ok: true, explicit: false, entries: [{ provider: 'hosted', model: 'm-large', reasoningEffort: 'high' }] });
  });

  it('refuses an omitted model when the chain is empty or wholly unconfigured', () => {
    const empty = parseGatewayConfigText('providers: {}\n', 'executor.yaml', {});
    expect(decideRoute(empty, null, LEASE_CALLER)).toMatchObject({ ok: false, code: 'gateway_config', message: expect.stringContaining('priority_models is empty') });
    const unconfigured = parseGatewayConfigText(
      'providers:\n  hosted: {base_url: https://api.example.com/v1, api_key_env: HOSTED_KEY, models: [m]}\nrouting: {priority_models: [{model: m}]}\n',
      'executor.yaml',
      {},
    );
    expect(decideRoute(unconfigured, null, LEASE_CALLER)).toMatchObject({ ok: false, code: 'gateway_config', message: expect.stringContaining('unset: HOSTED_KEY') });
  });

  it('lists each model bare once and as slug/model, configured providers only', () => {
    expect(listedModels(config)).toEqual([
      { id: 'qwen3-coder:30b', owned_by: 'local' },
      { id: 'local/qwen3-coder:30b', owned_by: 'local' },
      { id: 'shared', owned_by: 'local' },
      { id: 'local/shared', owned_by: 'local' },
    ]);
  });
});
