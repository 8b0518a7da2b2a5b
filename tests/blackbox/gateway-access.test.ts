/**
 * The model gateway's door — black-box, one `serve --port 0` for the file, its config rewritten
 * per test (the server re-reads it when it changes). Covers:
 * - access: /v1/chat/completions and /v1/models need the lease's token even on loopback, or the
 *   key named by gateway.api_key_env; anything else is 401 `unauthorized` in our shape plus
 *   OpenAI's `type`;
 * - config: a missing file is 503 `gateway_config` naming it; bad YAML and a bad field name the
 *   file and the field path; a fixed file is served at once;
 * - /v1/models lists the configured providers' models, bare and as slug/model, leaving out a
 *   provider whose key variable is unset;
 * - an explicit model is strict: unknown → 404 `model_not_found` naming it and listing the
 *   available ones, with nothing sent to any provider; a model on an unconfigured provider names
 *   its variable; no model with an empty chain is 503 `gateway_config`;
 * - a malformed X-Majordomus-Task is 400 `invalid_input`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_RELATIVE, jsonOf, MESSAGES, routeOf, startGatewayScene, type GatewayScene } from './gateway-fixture.js';

const GATEWAY_KEY = 'gateway-key-for-tests-0123456789';
let scene: GatewayScene;

beforeAll(async () => {
  scene = await startGatewayScene({ MAJORDOMUS_TEST_GATEWAY_KEY: GATEWAY_KEY, MAJORDOMUS_TEST_PROVIDER_KEY: 'sk-provider' });
});
afterAll(async () => {
  await scene?.close();
});
afterEach(async () => {
  await scene.stopProviders();
});

async function expectError(response: Response, status: number, code: string, message: RegExp | string = /\S/): Promise<string> {
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  const body = JSON.parse(text) as { error: { code: string; message: string; type: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.type).toMatch(/_error$/);
  if (typeof message === 'string') expect(body.error.message).toContain(message);
  else expect(body.error.message).toMatch(message);
  return body.error.message;
}

describe('the gateway door', () => {
  it('answers 503 gateway_config naming the file while executor.yaml is missing', async () => {
    await expectError(await scene.chat({ messages: MESSAGES }), 503, 'gateway_config', `${CONFIG_RELATIVE}: no such file`);
    await expectError(await scene.get('/v1/models'), 503, 'gateway_config', CONFIG_RELATIVE);
  });

  it('refuses a request without the token, or with a wrong one, with 401 even on loopback', async () => {
    const api = await scene.modelApi({ replies: [] });
    await scene.writeConfig(`providers:\n  one: {base_url: ${api.url}/v1, models: [m1]}\n`);
    const missing = await scene.chat({ model: 'm1', messages: MESSAGES }, { Authorization: '' });
    await expectError(missing, 401, 'unauthorized', 'Bearer');
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectError(await scene.chat({ model: 'm1', messages: MESSAGES }, { Authorization: 'Bearer not-the-token' }), 401, 'unauthorized');
    await expectError(await scene.get('/v1/models', { Authorization: `Bearer ${scene.server.token}x` }), 401, 'unauthorized');
    expect(api.requests).toEqual([]);
  });

  it('accepts the key named by gateway.api_key_env besides the lease token', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'text', text: 'hello' }] });
    await scene.writeConfig(`providers:\n  one: {base_url: ${api.url}/v1, models: [m1]}\ngateway: {api_key_env: MAJORDOMUS_TEST_GATEWAY_KEY}\n`);
    const response = await scene.chat({ model: 'm1', messages: MESSAGES }, { Authorization: `Bearer ${GATEWAY_KEY}` });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).choices[0].message.content).toBe('hello');
  });

  it('names the file and the field path of a broken field, and serves once the file is fixed', async () => {
    await scene.writeConfig('providers:\n  local: {base_url: not-a-url, models: [m1], max_concurrent: 0}\n');
    const message = await expectError(await scene.chat({ messages: MESSAGES }), 503, 'gateway_config', `${CONFIG_RELATIVE}: providers.local.base_url: `);
    expect(message).toContain('providers.local.max_concurrent: ');
    await scene.writeConfig('providers:\n  local: {base_url: http://127.0.0.1:9/v1, models: [m1], colour: blue}\n');
    await expectError(await scene.get('/v1/models'), 503, 'gateway_config', /providers\.local.*colour/);
    await scene.writeConfig('providers:\n  local: {base_url: http://127.0.0.1:9/v1, models: [m1]}\nrouting:\n  priority_models: [{model: nowhere}]\n');
    await expectError(await scene.get('/v1/models'), 503, 'gateway_config', `${CONFIG_RELATIVE}: routing.priority_models[0].model: no provider serves "nowhere"`);
    await scene.writeConfig('providers: [unclosed\n');
    await expectError(await scene.get('/v1/models'), 503, 'gateway_config', `${CONFIG_RELATIVE}: not valid YAML`);
    await scene.writeConfig('providers:\n  local: {base_url: http://127.0.0.1:9/v1, models: [m1]}\n');
    expect((await scene.get('/v1/models')).status).toBe(200);
  });

  it('lists every configured provider\'s models, bare and as slug/model, without the unconfigured ones', async () => {
    await scene.writeConfig(
      [
        'providers:',
        '  local: {base_url: http://127.0.0.1:9/v1, models: ["qwen3-coder:30b", shared]}',
        '  hosted: {base_url: https://api.example.invalid/v1, api_key_env: MAJORDOMUS_TEST_PROVIDER_KEY, models: [m-large, shared]}',
        '  absent: {base_url: https://other.example.invalid/v1, api_key_env: MAJORDOMUS_TEST_UNSET_KEY, models: [ghost]}',
      ].join('\n'),
    );
    const response = await scene.get('/v1/models');
    expect(response.status).toBe(200);
    expect(await jsonOf(response)).toEqual({
      object: 'list',
      data: [
        { id: 'qwen3-coder:30b', object: 'model', created: 0, owned_by: 'local' },
        { id: 'local/qwen3-coder:30b', object: 'model', created: 0, owned_by: 'local' },
        { id: 'shared', object: 'model', created: 0, owned_by: 'local' },
        { id: 'local/shared', object: 'model', created: 0, owned_by: 'local' },
        { id: 'm-large', object: 'model', created: 0, owned_by: 'hosted' },
        { id: 'hosted/m-large', object: 'model', created: 0, owned_by: 'hosted' },
        { id: 'hosted/shared', object: 'model', created: 0, owned_by: 'hosted' },
      ],
    });
  });

  it('refuses an explicit unknown model with 404 model_not_found naming it and the available ones, sending nothing upstream', async () => {
    const first = await scene.modelApi({ replies: [] });
    const second = await scene.modelApi({ replies: [] });
    await scene.writeConfig(
      `providers:\n  one: {base_url: ${first.url}/v1, models: [m1]}\n  two: {base_url: ${second.url}/v1, models: [m2]}\nrouting: {priority_models: [{model: m1}, {model: two/m2}]}\n`,
    );
    const response = await scene.chat({ model: 'gpt-9', messages: MESSAGES });
    const message = await expectError(response, 404, 'model_not_found', '"gpt-9"');
    expect(message).toContain('one/m1');
    expect(message).toContain('two/m2');
    expect(routeOf(response)).toEqual({ provider: null, model: null, failovers: [] });
    await expectError(await scene.chat({ model: 'one/m2', messages: MESSAGES }), 404, 'model_not_found', '"one/m2"');
    expect([...first.requests, ...second.requests]).toEqual([]);
  });

  it('names the unset key variable when an explicit model is on a provider that is not configured', async () => {
    await scene.writeConfig('providers:\n  hosted: {base_url: https://api.example.invalid/v1, api_key_env: MAJORDOMUS_TEST_UNSET_KEY, models: [m-large]}\n');
    await expectError(await scene.chat({ model: 'hosted/m-large', messages: MESSAGES }), 404, 'model_not_found', 'MAJORDOMUS_TEST_UNSET_KEY');
    await expectError(await scene.chat({ messages: MESSAGES }), 503, 'gateway_config', 'priority_models is empty');
    await scene.writeConfig(
      'providers:\n  hosted: {base_url: https://api.example.invalid/v1, api_key_env: MAJORDOMUS_TEST_UNSET_KEY, models: [m-large]}\nrouting: {priority_models: [{model: m-large}]}\n',
    );
    await expectError(await scene.chat({ messages: MESSAGES }), 503, 'gateway_config', 'MAJORDOMUS_TEST_UNSET_KEY');
  });

  it('refuses a malformed X-Majordomus-Task, a body that is not a JSON object and a model that is not a string', async () => {
    const api = await scene.modelApi({ replies: [] });
    await scene.writeConfig(`providers:\n  one: {base_url: ${api.url}/v1, models: [m1]}\n`);
    await expectError(await scene.chat({ model: 'm1', messages: MESSAGES }, { 'X-Majordomus-Task': 'no spaces allowed' }), 400, 'invalid_input', 'X-Majordomus-Task');
    await expectError(await scene.chat('[1, 2]'), 400, 'invalid_json', 'JSON object');
    await expectError(await scene.chat({ model: 42, messages: MESSAGES }), 400, 'invalid_input', 'model');
    const wrongMethod = await scene.get('/v1/chat/completions');
    await expectError(wrongMethod, 405, 'method_not_allowed', 'POST');
    expect(api.requests).toEqual([]);
  });
});
