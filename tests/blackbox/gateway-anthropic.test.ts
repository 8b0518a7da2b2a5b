/**
 * The gateway's Anthropic front and its keys — black-box, one `serve --port 0` for the file, a
 * scripted OpenAI-compatible provider behind it, its config rewritten per test. Covers:
 * - the real `claude` CLI, pointed at the server with ANTHROPIC_BASE_URL and the lease's token as
 *   its key (x-api-key), completes a turn in which the cheap provider calls a tool (claude runs
 *   Read and sends the result back) and then answers; its default `claude-…` model follows the
 *   priority chain; the provider got a chat-completions request (system, tools as functions, the
 *   tool result as a `tool` message after the call); usage counts it under `lease` with its cost;
 * - claude with a scoped gateway key as a bearer token (ANTHROPIC_AUTH_TOKEN) and `--model` one of
 *   its models is answered and counted under the key's name; usage per key and cost in
 *   /api/v1/usage;
 * - POST /v1/messages whole: text and tool_use blocks, stop reasons, usage; streamed: the
 *   Anthropic event sequence with text_delta and input_json_delta pieces joined into the call's
 *   input, message_delta with the stop reason and the usage chunk's tokens;
 * - errors in Anthropic's shape with our code: 401 for no key and an unknown key, 403
 *   forbidden_model naming the key and the model (explicit, and a chain the key may not use),
 *   404 model_not_found for an unknown name and for a claude-… name under
 *   routing.claude_models: strict, 400 invalid_input for a malformed conversation;
 * - /v1/messages/count_tokens answers an estimate and sends nothing to a provider;
 * - /v1/models lists only what a scoped key may use, in a shape both wires read.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentEnvironment, installedAgentClis, INSTALL_TIMEOUT_MS, killAgentTurns, runAgentTurn } from '../helpers/agent-clis.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import type { ModelApi } from '../helpers/model-api.js';
import { jsonOf, startGatewayScene, type GatewayScene } from './gateway-fixture.js';

const FRIEND_KEY = 'friend-key-for-tests-0123456789';
const OPERATOR_KEY = 'operator-key-for-tests-9876543210';
const TURN_TIMEOUT_MS = 120_000;
let scene: GatewayScene;

beforeAll(async () => {
  scene = await startGatewayScene({ MAJORDOMUS_TEST_FRIEND_KEY: FRIEND_KEY, MAJORDOMUS_TEST_OPERATOR_KEY: OPERATOR_KEY });
});
afterAll(async () => {
  await scene?.close();
});
afterEach(async () => {
  killAgentTurns();
  await scene.stopProviders();
});

/** Two providers (cheap serves m1 and m2, other serves o1), priced, with a friend key limited to cheap/m1. */
function configFor(cheap: ModelApi, other: string, extra = ''): string {
  return [
    'providers:',
    `  cheap: {base_url: ${cheap.url}/v1, models: [m1, m2]}`,
    `  other: {base_url: ${other}/v1, models: [o1]}`,
    'routing:',
    '  priority_models: [{model: cheap/m1}]',
    extra,
    'gateway:',
    '  keys:',
    '    - {name: friend, key_env: MAJORDOMUS_TEST_FRIEND_KEY, models: [cheap/m1]}',
    '    - {name: operator, key_env: MAJORDOMUS_TEST_OPERATOR_KEY, models: ["*"]}',
    'prices:',
    '  currency: USD',
    '  models:',
    '    cheap/*: {input_per_million: 1, output_per_million: 2}',
    '  reference: {name: claude-sonnet list price, input_per_million: 3, output_per_million: 15}',
    '',
  ].join('\n');
}

function messages(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${scene.server.loopbackUrl}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'x-api-key': scene.server.token, 'anthropic-version': '2023-06-01', 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function anthropicError(response: Response, status: number, code: string, type: string): Promise<string> {
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  const body = JSON.parse(text) as { type: string; error: { type: string; code: string; message: string } };
  expect(body).toMatchObject({ type: 'error', error: { type, code } });
  return body.error.message;
}

/** The events of an Anthropic SSE stream, parsed. */
function eventsOf(text: string): Array<{ event: string; data: Record<string, any> }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, any>;
      expect(data.type).toBe(event);
      return { event, data };
    });
}

const BASE = { max_tokens: 1024, messages: [{ role: 'user', content: 'hello' }] };

describe('the real claude CLI against the gateway', () => {
  beforeAll(async () => {
    await installedAgentClis();
  }, INSTALL_TIMEOUT_MS);

  it('completes a turn answered by the cheap provider: a tool call claude runs, then the answer, counted under lease with its cost', async () => {
    const work = await makeTempDir('claude-gateway-');
    try {
      const notes = join(work.path, 'notes.txt');
      await writeFile(notes, 'the secret word is pelican\n');
      const cheap = await scene.modelApi({
        replies: [
          { kind: 'tool_call', name: 'Read', input: { file_path: notes }, usage: { inputTokens: 2000, outputTokens: 50 } },
          { kind: 'text', text: 'The file says the secret word is pelican.', usage: { inputTokens: 2100, outputTokens: 20 } },
        ],
      });
      await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
      const before = await jsonOf(await scene.get('/api/v1/usage'));
      const home = await makeTempDir('claude-home-');
      try {
        const { env, command } = await agentEnvironment('claude', { home: home.path, modelApiUrl: scene.server.loopbackUrl });
        // The lease's token as the key: claude sends it as x-api-key.
        env.ANTHROPIC_API_KEY = scene.server.token;
        const turn = await runAgentTurn(command, ['-p', '--output-format', 'stream-json', '--verbose'], {
          cwd: work.path,
          env,
          stdin: 'What does notes.txt say?',
          timeoutMs: TURN_TIMEOUT_MS,
        });
        const events = turn.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>);
        const result = events.find((event) => event.type === 'result');
        expect({ code: turn.code, result, stderr: turn.stderr }).toMatchObject({ code: 0, result: { is_error: false, result: 'The file says the secret word is pelican.' } });
        // claude ran the tool the cheap model called.
        expect(events.some((event) => event.type === 'user' && JSON.stringify(event).includes('pelican'))).toBe(true);
      } finally {
        await home.cleanup();
      }
      // Both model requests reached the provider as chat completions.
      const [first, second] = cheap.modelRequests;
      expect(cheap.modelRequests).toHaveLength(2);
      expect(first?.api).toBe('openai-chat');
      const body = first?.body as { model: string; stream: boolean; messages: Array<Record<string, any>>; tools: Array<Record<string, any>> };
      expect(body).toMatchObject({ model: 'm1', stream: true, stream_options: { include_usage: true } });
      expect(body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('agent') });
      expect(body.tools.find((tool) => tool.function.name === 'Read')).toMatchObject({ type: 'function', function: { parameters: { type: 'object' } } });
      const followUp = (second?.body as { messages: Array<Record<string, any>> }).messages;
      const call = followUp.findIndex((message) => message.role === 'assistant' && Array.isArray(message.tool_calls));
      expect(followUp[call]?.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'Read', arguments: JSON.stringify({ file_path: notes }) } });
      expect(followUp[call + 1]).toMatchObject({ role: 'tool', tool_call_id: followUp[call]?.tool_calls[0].id, content: expect.stringContaining('pelican') });
      // Counted under the lease, priced at cheap/*: (2000 + 2100) * 1 + (50 + 20) * 2 per million.
      const usage = await jsonOf(await scene.get('/api/v1/usage'));
      const lease = usage.keys.lease;
      expect(lease.requests - (before.keys.lease?.requests ?? 0)).toBe(2);
      expect(lease.prompt_tokens - (before.keys.lease?.prompt_tokens ?? 0)).toBe(4100);
      expect(usage).toMatchObject({ currency: 'USD', reference: 'claude-sonnet list price' });
      expect(lease.cost - (before.keys.lease?.cost ?? 0)).toBeCloseTo((4100 * 1 + 70 * 2) / 1e6, 9);
      expect(lease.saved - (before.keys.lease?.saved ?? 0)).toBeCloseTo((4100 * 3 + 70 * 15 - (4100 + 140)) / 1e6, 9);
    } finally {
      await work.cleanup();
    }
  }, 3 * TURN_TIMEOUT_MS);

  it('answers claude holding a scoped key as a bearer token, on the model it names, counted under the key', async () => {
    const work = await makeTempDir('claude-gateway-');
    const home = await makeTempDir('claude-home-');
    try {
      const cheap = await scene.modelApi({ replies: [{ kind: 'text', text: 'Hello, friend.', usage: { inputTokens: 300, outputTokens: 4 } }] });
      await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
      const { env, command } = await agentEnvironment('claude', { home: home.path, modelApiUrl: scene.server.loopbackUrl });
      delete env.ANTHROPIC_API_KEY;
      env.ANTHROPIC_AUTH_TOKEN = FRIEND_KEY;
      const turn = await runAgentTurn(command, ['-p', '--output-format', 'stream-json', '--verbose', '--model', 'cheap/m1'], {
        cwd: work.path,
        env,
        stdin: 'Say hello.',
        timeoutMs: TURN_TIMEOUT_MS,
      });
      expect({ code: turn.code, stdout: turn.stdout.slice(-2000), stderr: turn.stderr }).toMatchObject({ code: 0, stdout: expect.stringContaining('Hello, friend.') });
      expect((cheap.modelRequests[0]?.body as { model: string }).model).toBe('m1');
      const usage = await jsonOf(await scene.get('/api/v1/usage'));
      expect(usage.keys.friend).toMatchObject({ requests: 1, prompt_tokens: 300, completion_tokens: 4, priced_requests: 1, cost: 0.000308 });
    } finally {
      await home.cleanup();
      await work.cleanup();
    }
  }, 3 * TURN_TIMEOUT_MS);
});

describe('POST /v1/messages', () => {
  it('answers a whole message: text and tool_use blocks, the stop reason and the usage', async () => {
    const cheap = await scene.modelApi({
      replies: [
        { kind: 'tool_call', name: 'get_weather', input: { city: 'Oslo' }, id: 'call_7', usage: { inputTokens: 40, outputTokens: 9 } },
        { kind: 'text', text: 'It is cold in Oslo.' },
      ],
    });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
    const tools = [{ name: 'get_weather', description: 'The weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = await messages({ ...BASE, model: 'claude-sonnet-4-5', system: [{ type: 'text', text: 'Be brief.' }], tools, tool_choice: { type: 'auto' } });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.headers.get('x-majordomus-route') ?? '{}')).toMatchObject({ provider: 'cheap', model: 'm1' });
    const message = await jsonOf(first);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm1',
      content: [{ type: 'tool_use', id: 'call_7', name: 'get_weather', input: { city: 'Oslo' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 40, output_tokens: 9 },
    });
    expect(message.id).toMatch(/^msg_/);
    const second = await messages({
      ...BASE,
      model: 'cheap/m1',
      tools,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'call_7', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_7', content: [{ type: 'text', text: '-5 C' }] }, { type: 'text', text: 'Answer now.' }] },
      ],
    });
    expect(await second.json()).toMatchObject({ content: [{ type: 'text', text: 'It is cold in Oslo.' }], stop_reason: 'end_turn' });
    const [one, two] = cheap.modelRequests.map((request) => request.body as Record<string, any>);
    expect(one).toMatchObject({
      model: 'm1',
      max_tokens: 1024,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters: tools[0]?.input_schema } }],
      tool_choice: 'auto',
    });
    expect(two?.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_7', content: '-5 C' },
      { role: 'user', content: 'Answer now.' },
    ]);
  });

  it('streams Anthropic events: text_delta pieces, a tool call split across chunks as input_json_delta, then the stop reason and usage', async () => {
    const cheap = await scene.modelApi({
      replies: [
        { kind: 'text', text: 'Hello there, streaming world.', usage: { inputTokens: 12, outputTokens: 6 } },
        { kind: 'tool_call', name: 'get_weather', input: { city: 'Reykjavik', units: 'metric' }, usage: { inputTokens: 30, outputTokens: 8 } },
      ],
    });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
    const text = await messages({ ...BASE, model: 'claude-haiku-4-5', stream: true });
    expect(text.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = eventsOf(await text.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      ...Array(4).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]?.data.message).toMatchObject({ role: 'assistant', model: 'm1', content: [] });
    expect(events[1]?.data).toMatchObject({ index: 0, content_block: { type: 'text', text: '' } });
    expect(events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text).join('')).toBe('Hello there, streaming world.');
    expect(events.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 12, output_tokens: 6 } });

    const tool = eventsOf(await (await messages({ ...BASE, model: 'claude-haiku-4-5', stream: true, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] })).text());
    expect(tool[1]?.data.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
    const pieces = tool.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    expect(pieces.length).toBeGreaterThan(1); // the provider split the arguments in three chunks
    expect(pieces.every((delta) => delta.type === 'input_json_delta')).toBe(true);
    expect(JSON.parse(pieces.map((delta) => delta.partial_json).join(''))).toEqual({ city: 'Reykjavik', units: 'metric' });
    expect(tool.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 30, output_tokens: 8 } });
    expect(tool.at(-1)?.event).toBe('message_stop');
  });

  it('refuses in Anthropic\'s shape: 401 for no key or an unknown one, 403 forbidden_model naming the key and the model, 404 model_not_found, 400 invalid_input', async () => {
    const cheap = await scene.modelApi({ replies: [] });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
    await anthropicError(await messages({ ...BASE, model: 'cheap/m1' }, { 'x-api-key': '' }), 401, 'unauthorized', 'authentication_error');
    await anthropicError(await messages({ ...BASE, model: 'cheap/m1' }, { 'x-api-key': 'not-a-key' }), 401, 'unauthorized', 'authentication_error');
    const forbidden = await anthropicError(await messages({ ...BASE, model: 'cheap/m2' }, { 'x-api-key': FRIEND_KEY }), 403, 'forbidden_model', 'permission_error');
    expect(forbidden).toContain('key friend may not use model "cheap/m2"');
    expect(forbidden).toContain('its models: cheap/m1');
    await anthropicError(await messages({ ...BASE, model: 'gpt-nothing' }), 404, 'model_not_found', 'not_found_error');
    await anthropicError(await messages({ ...BASE, model: 'cheap/m1', messages: [{ role: 'robot', content: 'x' }] }), 400, 'invalid_input', 'invalid_request_error');
    expect(cheap.modelRequests).toEqual([]);
  });

  it('refuses a key the chain is closed to, and a claude-… name under routing.claude_models: strict', async () => {
    const cheap = await scene.modelApi({ replies: [] });
    const other = await scene.modelApi({ replies: [] });
    await scene.writeConfig(configFor(cheap, other.url, '  claude_models: strict').replace('priority_models: [{model: cheap/m1}]', 'priority_models: [{model: other/o1}]'));
    await anthropicError(await messages({ ...BASE, model: 'claude-sonnet-4-5' }), 404, 'model_not_found', 'not_found_error');
    await scene.writeConfig(configFor(cheap, other.url).replace('priority_models: [{model: cheap/m1}]', 'priority_models: [{model: other/o1}]'));
    const closed = await anthropicError(await messages({ ...BASE, model: 'claude-sonnet-4-5' }, { 'x-api-key': FRIEND_KEY }), 403, 'forbidden_model', 'permission_error');
    expect(closed).toContain('key friend may use no model of routing.priority_models (other/o1)');
    expect([...cheap.modelRequests, ...other.modelRequests]).toEqual([]);
  });

  it('answers count_tokens with an estimate, sending nothing to a provider', async () => {
    const cheap = await scene.modelApi({ replies: [] });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
    const response = await fetch(`${scene.server.loopbackUrl}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': scene.server.token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', system: 'You are terse.', messages: [{ role: 'user', content: 'x'.repeat(3000) }] }),
    });
    expect(response.status).toBe(200);
    const { input_tokens } = await jsonOf(response);
    expect(input_tokens).toBeGreaterThan(1000);
    expect(input_tokens).toBeLessThan(1100);
    expect(cheap.requests).toEqual([]);
  });
});

describe('GET /v1/models with a key', () => {
  it('lists only the models a scoped key may use, in a shape OpenAI and Anthropic clients both read', async () => {
    const cheap = await scene.modelApi({ replies: [] });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9'));
    const friend = await jsonOf(await scene.get('/v1/models', { Authorization: `Bearer ${FRIEND_KEY}` }));
    expect(friend.data.map((model: { id: string }) => model.id)).toEqual(['m1', 'cheap/m1']);
    expect(friend).toMatchObject({ object: 'list', has_more: false, first_id: 'm1', last_id: 'cheap/m1' });
    expect(friend.data[0]).toMatchObject({ id: 'm1', object: 'model', owned_by: 'cheap', type: 'model', display_name: 'm1' });
    const operator = await jsonOf(await scene.get('/v1/models', { Authorization: '', 'x-api-key': OPERATOR_KEY }));
    expect(operator.data.map((model: { id: string }) => model.id)).toEqual(['m1', 'cheap/m1', 'm2', 'cheap/m2', 'o1', 'other/o1']);
  });

  it('refuses a config whose key names a model no provider serves, naming the field', async () => {
    const cheap = await scene.modelApi({ replies: [] });
    await scene.writeConfig(configFor(cheap, 'http://127.0.0.1:9').replace('models: [cheap/m1]}', 'models: [cheap/m9]}'));
    const response = await scene.get('/v1/models');
    expect(response.status).toBe(503);
    expect((await jsonOf(response)).error).toMatchObject({ code: 'gateway_config', message: expect.stringContaining('gateway.keys[0].models[0]: provider cheap does not list "m9"') });
  });
});
