/**
 * The scripted model API (tests/helpers/model-api.ts), spoken to with plain fetch:
 * - Anthropic Messages: SSE events in the documented order, text deltas that join to the reply,
 *   a tool call as a tool_use block, the non-streaming JSON message, `?beta=true` accepted;
 * - OpenAI Responses: SSE events in order, a function call item, the non-streaming response;
 * - Gemini: data-only SSE chunks ending with finishReason and usage, generateContent, function calls;
 * - replies are consumed in order across wire formats, `enqueue` appends, a function script sees
 *   each request and its index; no reply left, or a throwing function, is a 400 naming why and a
 *   noted problem; an error reply answers in the vendor's error shape;
 * - every request is recorded (path, query and headers without credentials, parsed and decoded
 *   body); an unknown route is a recorded 404 that takes no reply;
 * - `holdUntil` keeps a stream open after its head; `stop()` closes held connections, twice safely;
 * - `conversationOf` reads the conversation of each wire format the same way.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { conversationOf, pieces, startModelApi, type ModelApi, type ReplyScript } from '../../helpers/model-api.js';

interface SseEvent {
  event: string | null;
  data: Record<string, unknown>;
}

let api: ModelApi | null = null;

afterEach(async () => {
  await api?.stop();
  api = null;
});

async function start(replies: ReplyScript = []): Promise<ModelApi> {
  api = await startModelApi({ replies });
  return api;
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Parses an SSE body: blank-line separated frames of `event:` and `data:` lines. */
async function sse(response: Response): Promise<SseEvent[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const text = await response.text();
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? null;
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice('data: '.length));
      expect(data).toHaveLength(1);
      return { event, data: JSON.parse(data[0]!) as Record<string, unknown> };
    });
}

const ANTHROPIC_REQUEST = { model: 'claude-test', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
const RESPONSES_REQUEST = { model: 'gpt-test', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] };
const GEMINI_REQUEST = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
const GEMINI_STREAM = '/v1beta/models/gemini-test:streamGenerateContent?alt=sse';

describe('the scripted model API', () => {
  describe('Anthropic Messages', () => {
    it('streams a text reply as message_start, a text block of word deltas, message_delta and message_stop', async () => {
      await start([{ kind: 'text', text: 'Hello there, world.', usage: { inputTokens: 7, outputTokens: 3 } }]);
      const events = await sse(await post('/v1/messages?beta=true', ANTHROPIC_REQUEST));
      expect(events.map((e) => e.event)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      for (const e of events) expect(e.data.type).toBe(e.event);
      expect(events[0]!.data.message).toMatchObject({ role: 'assistant', model: 'claude-test', content: [], usage: { input_tokens: 7 } });
      expect(events[1]!.data.content_block).toEqual({ type: 'text', text: '' });
      const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta as { type: string; text: string });
      expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
      expect(deltas.map((d) => d.text).join('')).toBe('Hello there, world.');
      expect(events[6]!.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } });
    });

    it('streams a tool call as a tool_use block whose input arrives as JSON deltas, stopping for tool_use', async () => {
      await start([{ kind: 'tool_call', name: 'Read', input: { file_path: '/x' }, id: 'toolu_1' }]);
      const events = await sse(await post('/v1/messages', ANTHROPIC_REQUEST));
      expect(events[1]!.data.content_block).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} });
      const delta = events.find((e) => e.event === 'content_block_delta')!.data.delta as { type: string; partial_json: string };
      expect(delta.type).toBe('input_json_delta');
      expect(JSON.parse(delta.partial_json)).toEqual({ file_path: '/x' });
      expect(events.find((e) => e.event === 'message_delta')!.data).toMatchObject({ delta: { stop_reason: 'tool_use' } });
    });

    it('answers a request without stream as one JSON message', async () => {
      await start([{ kind: 'text', text: 'Whole answer.' }]);
      const response = await post('/v1/messages', { ...ANTHROPIC_REQUEST, stream: false });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [{ type: 'text', text: 'Whole answer.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    });
  });

  describe('OpenAI Responses', () => {
    it('streams a text reply from response.created through output text deltas to response.completed with usage', async () => {
      await start([{ kind: 'text', text: 'Two words' }]);
      const events = await sse(await post('/v1/responses', RESPONSES_REQUEST));
      expect(events.map((e) => e.event)).toEqual([
        'response.created',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_e, i) => i));
      for (const e of events) expect(e.data.type).toBe(e.event);
      const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta);
      expect(deltas.join('')).toBe('Two words');
      expect(events[7]!.data.item).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Two words' }] });
      expect(events[8]!.data.response).toMatchObject({ status: 'completed', model: 'gpt-test', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
    });

    it('streams a tool call as a function_call item with its arguments', async () => {
      await start([{ kind: 'tool_call', name: 'exec_command', input: { cmd: 'ls' } }]);
      const events = await sse(await post('/v1/responses', RESPONSES_REQUEST));
      expect(events.map((e) => e.event)).toEqual([
        'response.created',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const item = events[4]!.data.item as Record<string, string>;
      expect(item).toMatchObject({ type: 'function_call', name: 'exec_command', call_id: 'call_scripted_1' });
      expect(JSON.parse(item.arguments!)).toEqual({ cmd: 'ls' });
    });

    it('answers a request without stream as one response object', async () => {
      await start([{ kind: 'text', text: 'Whole.' }]);
      const response = await post('/v1/responses', { ...RESPONSES_REQUEST, stream: false });
      expect(await response.json()).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ text: 'Whole.' }] }] });
    });
  });

  describe('Gemini', () => {
    it('streams data-only chunks, the last with finishReason STOP and usage, the model from the path', async () => {
      await start([{ kind: 'text', text: 'Three little words' }]);
      const events = await sse(await post(GEMINI_STREAM, GEMINI_REQUEST));
      expect(events.every((e) => e.event === null)).toBe(true);
      const candidates = events.map((e) => (e.data.candidates as { content: { parts: { text: string }[] }; finishReason?: string }[])[0]!);
      expect(candidates.map((c) => c.content.parts[0]!.text).join('')).toBe('Three little words');
      expect(candidates.map((c) => c.finishReason)).toEqual([undefined, undefined, 'STOP']);
      expect(events.at(-1)!.data).toMatchObject({ usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5 }, modelVersion: 'gemini-test' });
      expect(events[0]!.data.usageMetadata).toBeUndefined();
    });

    it('answers generateContent with one whole response, and a tool call as a functionCall part', async () => {
      await start([{ kind: 'tool_call', name: 'read_file', input: { file_path: 'a' } }]);
      const response = await post('/v1beta/models/gemini-test:generateContent', GEMINI_REQUEST);
      expect(await response.json()).toMatchObject({
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { file_path: 'a' } } }] }, finishReason: 'STOP' }],
      });
      expect(api!.requests[0]).toMatchObject({ api: 'gemini', stream: false });
    });
  });

  describe('the script', () => {
    it('consumes the replies in order, whatever wire format asks, and enqueue appends more', async () => {
      await start([
        { kind: 'text', text: 'one' },
        { kind: 'text', text: 'two' },
      ]);
      api!.enqueue({ kind: 'text', text: 'three' });
      const first = await post('/v1/messages', { ...ANTHROPIC_REQUEST, stream: false });
      const second = await post('/v1/responses', { ...RESPONSES_REQUEST, stream: false });
      const third = await post('/v1beta/models/m:generateContent', GEMINI_REQUEST);
      expect(((await first.json()) as { content: { text: string }[] }).content[0]!.text).toBe('one');
      expect(((await second.json()) as { output: { content: { text: string }[] }[] }).output[0]!.content[0]!.text).toBe('two');
      expect(((await third.json()) as { candidates: { content: { parts: { text: string }[] } }[] }).candidates[0]!.content.parts[0]!.text).toBe('three');
    });

    it('asks a function script for each reply with the recorded request and its index', async () => {
      await start((request, index) => ({ kind: 'text', text: `${index}:${(request.body as { model: string }).model}` }));
      const texts: string[] = [];
      for (const model of ['a', 'b']) {
        const response = await post('/v1/messages', { ...ANTHROPIC_REQUEST, model, stream: false });
        texts.push(((await response.json()) as { content: { text: string }[] }).content[0]!.text);
      }
      expect(texts).toEqual(['0:a', '1:b']);
      expect(() => api!.enqueue({ kind: 'text', text: 'x' })).toThrow(/function/);
    });

    it('answers 400 naming the request when no reply is left, and notes the problem', async () => {
      await start([]);
      const response = await post('/v1/messages', ANTHROPIC_REQUEST);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error).toEqual({ type: 'invalid_request_error', message: 'the script has no reply left for model request 1 (POST /v1/messages)' });
      expect(api!.problems).toEqual(['the script has no reply left for model request 1 (POST /v1/messages)']);
    });

    it('answers 400 with the error when the reply function throws, and notes the problem', async () => {
      await start(() => {
        throw new Error('no idea');
      });
      const response = await post('/v1/responses', RESPONSES_REQUEST);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/reply function threw .*no idea/);
      expect(api!.problems).toHaveLength(1);
    });

    it("answers an error reply with its status in each vendor's error shape", async () => {
      await start(() => ({ kind: 'error', status: 429, message: 'slow down' }));
      const anthropic = await post('/v1/messages', ANTHROPIC_REQUEST);
      expect(anthropic.status).toBe(429);
      expect(await anthropic.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
      const responses = await post('/v1/responses', RESPONSES_REQUEST);
      expect(((await responses.json()) as { error: { message: string } }).error.message).toBe('slow down');
      const gemini = await post(GEMINI_STREAM, GEMINI_REQUEST);
      expect(await gemini.json()).toEqual({ error: { code: 429, message: 'slow down', status: 'INVALID_ARGUMENT' } });
      expect(api!.problems).toEqual([]);
    });
  });

  describe('recording', () => {
    it('records path, query, headers without credentials and the parsed body of every request', async () => {
      await start([{ kind: 'text', text: 'a' }, { kind: 'text', text: 'b' }]);
      await (await post('/v1/messages?beta=true', ANTHROPIC_REQUEST, { 'x-api-key': 'secret', 'anthropic-version': '2023-06-01' })).text();
      await (await post(`${GEMINI_STREAM}&key=secret`, GEMINI_REQUEST, { 'x-goog-api-key': 'secret', authorization: 'Bearer secret' })).text();
      const [anthropic, gemini] = api!.requests;
      expect(anthropic).toMatchObject({ method: 'POST', path: '/v1/messages', query: { beta: 'true' }, body: ANTHROPIC_REQUEST, api: 'anthropic-messages', stream: true });
      expect(anthropic!.headers['anthropic-version']).toBe('2023-06-01');
      expect(gemini).toMatchObject({ path: '/v1beta/models/gemini-test:streamGenerateContent', query: { alt: 'sse' }, api: 'gemini', stream: true });
      expect(JSON.stringify(api!.requests)).not.toContain('secret');
    });

    it('decodes a gzip body', async () => {
      await start([{ kind: 'text', text: 'a' }]);
      const body = await promisify(gzip)(JSON.stringify({ ...RESPONSES_REQUEST, stream: false }));
      const response = await fetch(`${api!.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
      expect(response.status).toBe(200);
      expect(api!.requests[0]!.body).toEqual({ ...RESPONSES_REQUEST, stream: false });
    });

    it('answers an unknown route 404, records it, and keeps the reply for the next model request', async () => {
      await start([{ kind: 'text', text: 'kept' }]);
      const models = await fetch(`${api!.url}/v1/unknown`);
      expect(models.status).toBe(404);
      expect(((await models.json()) as { error: { message: string } }).error.message).toBe('no route for GET /v1/unknown');
      const response = await post('/v1/messages', { ...ANTHROPIC_REQUEST, stream: false });
      expect(((await response.json()) as { content: { text: string }[] }).content[0]!.text).toBe('kept');
      expect(api!.requests.map((r) => r.api)).toEqual([null, 'anthropic-messages']);
      expect(api!.modelRequests).toHaveLength(1);
    });

    it('waits for a number of model requests', async () => {
      await start([{ kind: 'text', text: 'a' }]);
      const waiting = api!.waitForModelRequests(1, 5_000);
      await (await post('/v1/messages', ANTHROPIC_REQUEST)).text();
      expect(await waiting).toHaveLength(1);
      await expect(api!.waitForModelRequests(2, 100)).rejects.toThrow(/2 model request/);
    });
  });

  describe('holding and stopping', () => {
    it('holds a stream open after its head until released', async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await start([{ kind: 'text', text: 'late answer', holdUntil: held }]);
      const response = await post('/v1/messages', ANTHROPIC_REQUEST);
      const reader = response.body!.getReader();
      const head = new TextDecoder().decode((await reader.read()).value);
      expect(head).toMatch(/^event: message_start\n/);
      expect(head).not.toContain('content_block');
      release();
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
      expect(rest).toContain('late ');
      expect(rest).toContain('event: message_stop');
    });

    it('closes held connections on stop, and stops twice safely', async () => {
      await start([{ kind: 'text', text: 'never', holdUntil: new Promise(() => {}) }]);
      const response = await post('/v1/responses', RESPONSES_REQUEST);
      const reader = response.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('response.created');
      const url = api!.url;
      await Promise.all([api!.stop(), api!.stop()]);
      await expect(reader.read()).rejects.toThrow();
      await expect(fetch(`${url}/v1/responses`, { method: 'POST', body: '{}' })).rejects.toThrow();
    });
  });

  describe('conversationOf', () => {
    it('reads an Anthropic conversation, tool calls and tool results included', () => {
      const request = {
        method: 'POST', path: '/v1/messages', query: {}, headers: {}, api: 'anthropic-messages' as const, stream: true,
        body: {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'read it' }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: { file_path: 'f' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'file text' }] },
            { role: 'assistant', content: 'done' },
          ],
        },
      };
      expect(conversationOf(request)).toEqual([
        { role: 'user', text: 'read it' },
        { role: 'assistant', text: 'tool_call Read {"file_path":"f"}' },
        { role: 'tool', text: 'file text' },
        { role: 'assistant', text: 'done' },
      ]);
    });

    it('reads a Responses input, function calls and their output included', () => {
      const request = {
        method: 'POST', path: '/v1/responses', query: {}, headers: {}, api: 'openai-responses' as const, stream: true,
        body: {
          input: [
            { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] },
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
            { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}', call_id: 'c' },
            { type: 'function_call_output', call_id: 'c', output: 'listing' },
          ],
        },
      };
      expect(conversationOf(request)).toEqual([
        { role: 'developer', text: 'rules' },
        { role: 'user', text: 'a\nb' },
        { role: 'assistant', text: 'tool_call exec_command {"cmd":"ls"}' },
        { role: 'tool', text: 'listing' },
      ]);
    });

    it('reads Gemini contents, model turns as the assistant and function responses as tool results', () => {
      const request = {
        method: 'POST', path: '/v1beta/models/m:streamGenerateContent', query: {}, headers: {}, api: 'gemini' as const, stream: true,
        body: {
          contents: [
            { role: 'user', parts: [{ text: 'q' }] },
            { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { p: 1 } } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'x' } } }] },
          ],
        },
      };
      expect(conversationOf(request)).toEqual([
        { role: 'user', text: 'q' },
        { role: 'assistant', text: 'tool_call read_file {"p":1}' },
        { role: 'tool', text: '{"output":"x"}' },
      ]);
    });

    it('is empty for a request that is not a model request', () => {
      expect(conversationOf({ method: 'GET', path: '/v1/models', query: {}, headers: {}, api: null, stream: false, body: null })).toEqual([]);
    });
  });

  it('streams text as one piece per word that joins back to the text', () => {
    expect(pieces('  Hello,  big world\n')).toEqual(['  Hello,  ', 'big ', 'world\n']);
    expect(pieces('  Hello,  big world\n').join('')).toBe('  Hello,  big world\n');
    expect(pieces('')).toEqual([]);
  });
});
