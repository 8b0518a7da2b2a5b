/**
 * The model gateway's door — black-box, one `serve --port 0` for the file, its config rewritten
 * per test (the server re-reads it when it changes). Covers:
 * - access: /v1/chat/completions and /v1/models need the lease's token even on loopback, or the
 *   key named by gateway.api_key_env; anything else is 401 `unauthorized` in our shape plus
 *   OpenAI's `type`; a key of gateway.keys (as a bearer or as x-api-key) may use only its models:
 *   another is 403 `forbidden_model` naming the key and the model, and the chain is narrowed to
 *   its models;
 * - config: a missing file is 503 `gateway_config` naming it; bad YAML and a bad field name the
 *   file and the field path; a fixed file is served at once;
 * - /v1/models lists the configured providers' models, bare and as slug/model, leaving out a
 *   provider whose key variable is unset;
 * - an explicit model is strict: unknown → 404 `model_not_found` naming it and listing the
 *   available ones, with nothing sent to any provider; a model on an unconfigured provider names
 *   its variable; no model with an empty chain is 503 `gateway_config`;
 * - a malformed X-Majordomus-Task is 400 `invalid_input`;
 * - a model request may carry a whole conversation: a 2 MiB body (over every other route's 1 MiB)
 *   is forwarded, one over 32 MiB is 413 `too_large` with nothing sent upstream.
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

  it('lets a key of gateway.keys use only its models, as a bearer or x-api-key, and narrows the chain to them', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'text', text: 'from m2' }, { kind: 'text', text: 'from m2 again' }] });
    await scene.writeConfig(
      `providers:\n  one: {base_url: ${api.url}/v1, models: [m1, m2]}\nrouting: {priority_models: [{model: m1}, {model: m2}]}\ngateway:\n  keys: [{name: narrow, key_env: MAJORDOMUS_TEST_GATEWAY_KEY, models: [one/m2]}]\n`,
    );
    const message = await expectError(await scene.chat({ model: 'm1', messages: MESSAGES }, { Authorization: `Bearer ${GATEWAY_KEY}` }), 403, 'forbidden_model');
    expect(message).toContain('key narrow may not use model "m1" (one/m1); its models: one/m2; available: one/m2');
    const chained = await scene.chat({ messages: MESSAGES }, { Authorization: '', 'x-api-key': GATEWAY_KEY });
    expect(chained.status).toBe(200);
    expect(routeOf(chained)).toMatchObject({ provider: 'one', model: 'm2', failovers: [] });
    expect((await jsonOf(await scene.chat({ model: 'm2', messages: MESSAGES }, { Authorization: `Bearer ${GATEWAY_KEY}` }))).choices[0].message.content).toBe('from m2 again');
    expect(api.modelRequests.map((request) => (request.body as { model: string }).model)).toEqual(['m2', 'm2']);
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
    // OpenAI's list shape, with Anthropic's fields beside it (one list answers both wires).
    const anthropic = (id: string) => ({ type: 'model', display_name: id, created_at: '1970-01-01T00:00:00.000Z' });
    expect(await jsonOf(response)).toEqual({
      object: 'list',
      has_more: false,
      first_id: 'qwen3-coder:30b',
      last_id: 'hosted/shared',
      data: [
        { id: 'qwen3-coder:30b', object: 'model', created: 0, owned_by: 'local', ...anthropic('qwen3-coder:30b') },
        { id: 'local/qwen3-coder:30b', object: 'model', created: 0, owned_by: 'local', ...anthropic('local/qwen3-coder:30b') },
        { id: 'shared', object: 'model', created: 0, owned_by: 'local', ...anthropic('shared') },
        { id: 'local/shared', object: 'model', created: 0, owned_by: 'local', ...anthropic('local/shared') },
        { id: 'm-large', object: 'model', created: 0, owned_by: 'hosted', ...anthropic('m-large') },
        { id: 'hosted/m-large', object: 'model', created: 0, owned_by: 'hosted', ...anthropic('hosted/m-large') },
        { id: 'hosted/shared', object: 'model', created: 0, owned_by: 'hosted', ...anthropic('hosted/shared') },
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

  it('forwards a conversation over 1 MiB and refuses a body over 32 MiB with 413 too_large', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'text', text: 'read it all' }] });
    await scene.writeConfig(`providers:\n  one: {base_url: ${api.url}/v1, models: [m1]}\n`);
    const long = [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }];
    const answered = await scene.chat({ model: 'm1', messages: long });
    expect(answered.status).toBe(200);
    expect((await jsonOf(answered)).choices[0].message.content).toBe('read it all');
    const huge = await scene.chat({ model: 'm1', messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }] });
    expect(huge.status).toBe(413);
    expect((await jsonOf(huge)).error.code).toBe('too_large');
    expect(api.requests).toHaveLength(1);
  });
});
