/**
 * The streaming chat-completions client against real loopback servers (the scripted model API, and
 * a raw one for chunk shapes the script does not make). Covers:
 * - the request: path, body (model omitted unless given, tools, tool_choice, stream, usage option),
 *   Authorization and X-Majordomus-Task headers;
 * - text joined across chunks, a tool call's arguments split across chunks, two calls interleaved
 *   by `index`, `data:` without a space, CRLF lines, comments, and [DONE] ending the read;
 * - usage from the usage chunk; none reported → null; the route header parsed;
 * - a whole (non-streaming) JSON answer;
 * - typed errors: HTTP status with the server's message (JSON and plain bodies), a stream cut
 *   mid-way, a stream that ends unfinished, a chunk that is not JSON, an error inside the stream,
 *   an unreachable endpoint (a closed port), and our own abort.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatError, parseRoute, streamChat, type ChatEndpoint, type ChatRequest } from '../../../src/executor/chat.js';
import { startModelApi, type ModelApi } from '../../helpers/model-api.js';

interface RawServer {
  url: string;
  requests: { headers: IncomingMessage['headers']; body: string }[];
  stop(): Promise<void>;
}

const servers: (RawServer | ModelApi)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A loopback server answering every request with `answer`. */
async function rawServer(answer: (response: ServerResponse) => void | Promise<void>): Promise<RawServer> {
  const requests: RawServer['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      void answer(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const raw: RawServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  servers.push(raw);
  return raw;
}

function sse(response: ServerResponse, text: string, headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
  response.end(text);
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

async function scripted(...replies: Parameters<typeof startModelApi>[0][]): Promise<ModelApi> {
  const api = await startModelApi(replies[0]);
  servers.push(api);
  return api;
}

const request: ChatRequest = {
  model: null,
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ type: 'function', function: { name: 'read_file', description: 'read', parameters: { type: 'object' } } }],
};

function endpoint(url: string, extra: Partial<ChatEndpoint> = {}): ChatEndpoint {
  return { baseUrl: `${url}/v1`, apiKey: null, taskId: null, ...extra };
}

async function chatError(run: Promise<unknown>): Promise<ChatError> {
  const error = await run.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ChatError);
  return error as ChatError;
}

describe('streamChat: the request', () => {
  it('posts to {base}/chat/completions with the tools, stream options, and no model when none is given', async () => {
    const api = await scripted({ replies: [{ kind: 'text', text: 'ok' }] });
    await streamChat(endpoint(api.url), request);
    const [sent] = api.modelRequests;
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.body).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      tools: request.tools,
      tool_choice: 'auto',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('sends the model when given, tool_choice none when asked, and no tools when there are none', async () => {
    const api = await scripted({ replies: [{ kind: 'text', text: 'a' }, { kind: 'text', text: 'b' }] });
    await streamChat(endpoint(api.url), { ...request, model: 'qwen3', toolChoice: 'none' });
    await streamChat(endpoint(api.url), { ...request, tools: [] });
    const [first, second] = api.modelRequests.map((r) => r.body as Record<string, unknown>);
    expect(first).toMatchObject({ model: 'qwen3', tool_choice: 'none' });
    expect(second).not.toHaveProperty('tools');
    expect(second).not.toHaveProperty('tool_choice');
    expect(second).not.toHaveProperty('model');
  });

  it('sends the key as a bearer token and the task id as X-Majordomus-Task', async () => {
    const raw = await rawServer((response) => sse(response, `${chunk({ content: 'x' }, 'stop')}data: [DONE]\n\n`));
    await streamChat(endpoint(raw.url, { apiKey: 'sk-test', taskId: 'task-7' }), request);
    expect(raw.requests[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(raw.requests[0]?.headers['x-majordomus-task']).toBe('task-7');
    await streamChat(endpoint(raw.url), request);
    expect(raw.requests[1]?.headers).not.toHaveProperty('authorization');
    expect(raw.requests[1]?.headers).not.toHaveProperty('x-majordomus-task');
  });
});

describe('streamChat: assembling the stream', () => {
  it('joins text pieces and reports the usage chunk exactly', async () => {
    const api = await scripted({ replies: [{ kind: 'text', text: 'all three words', usage: { inputTokens: 123, outputTokens: 45 } }] });
    const reply = await streamChat(endpoint(api.url), request);
    expect(reply).toMatchObject({ content: 'all three words', toolCalls: [], usage: { prompt_tokens: 123, completion_tokens: 45 }, finishReason: 'stop' });
  });

  it('assembles a tool call whose arguments arrive in three pieces', async () => {
    const input = { path: 'src/some/rather/long/path.ts', offset: 10 };
    const api = await scripted({ replies: [{ kind: 'tool_call', name: 'read_file', input, id: 'call_x' }] });
    const reply = await streamChat(endpoint(api.url), request);
    expect(reply.toolCalls).toEqual([{ id: 'call_x', type: 'function', function: { name: 'read_file', arguments: JSON.stringify(input) } }]);
    expect(reply.finishReason).toBe('tool_calls');
  });

  it('keeps two interleaved calls apart by index, with CRLF lines, comments and data: without a space', async () => {
    const call = (index: number, fn: Record<string, unknown>, id?: string): Record<string, unknown> => ({ index, ...(id ? { id, type: 'function' } : {}), function: fn });
    const lines = [
      ': keep-alive comment',
      `data:${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Reading ' } }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'both.', tool_calls: [call(0, { name: 'read_file', arguments: '{"pa' }, 'c0')] } }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call(1, { name: 'glob', arguments: '{"pattern"' }, 'c1')] } }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call(0, { arguments: 'th":"a"}' }), call(1, { arguments: ':"*.ts"}' })] } }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}`,
      '',
      'data: [DONE]',
      '',
      'data: {"this": "is never read"',
      '',
    ];
    const raw = await rawServer((response) => sse(response, lines.join('\r\n')));
    const reply = await streamChat(endpoint(raw.url), request);
    expect(reply.content).toBe('Reading both.');
    expect(reply.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['c0', 'read_file', '{"path":"a"}'],
      ['c1', 'glob', '{"pattern":"*.ts"}'],
    ]);
    expect(reply.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3 });
  });

  it('reports null usage when the server sends none, and accepts a finished stream without [DONE]', async () => {
    const raw = await rawServer((response) => sse(response, `${chunk({ content: 'hi' })}${chunk({}, 'stop')}`));
    const reply = await streamChat(endpoint(raw.url), request);
    expect(reply).toMatchObject({ content: 'hi', usage: null, finishReason: 'stop' });
  });

  it('reads the gateway route header, failovers included', async () => {
    const route = { provider: 'local', model: 'qwen3', failovers: [{ provider: 'cloud', model: 'big', reason: 'HTTP 429' }] };
    const raw = await rawServer((response) => sse(response, `${chunk({ content: 'x' }, 'stop')}data: [DONE]\n\n`, { 'x-majordomus-route': JSON.stringify(route) }));
    expect((await streamChat(endpoint(raw.url), request)).route).toEqual(route);
    expect(parseRoute('not json')).toBeNull();
    expect(parseRoute(null)).toBeNull();
    expect(parseRoute('{"provider":"p","model":"m"}')).toEqual({ provider: 'p', model: 'm', failovers: [] });
  });

  it('takes a whole JSON completion from a server that ignored stream: true', async () => {
    const raw = await rawServer((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'w1', type: 'function', function: { name: 'read_file', arguments: '{"path":"b"}' } }] }, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 9, completion_tokens: 2 },
        }),
      );
    });
    const reply = await streamChat(endpoint(raw.url), request);
    expect(reply).toMatchObject({ content: '', usage: { prompt_tokens: 9, completion_tokens: 2 }, finishReason: 'tool_calls' });
    expect(reply.toolCalls[0]?.function).toEqual({ name: 'read_file', arguments: '{"path":"b"}' });
  });
});

describe('streamChat: typed errors', () => {
  it('names the HTTP status and the server\'s message from an {error:{message,code}} body', async () => {
    const api = await scripted({ replies: [{ kind: 'error', status: 500, message: 'the GPU caught fire' }] });
    const error = await chatError(streamChat(endpoint(api.url), request));
    expect(error.kind).toBe('http');
    expect(error.status).toBe(500);
    expect(error.message).toBe('the model endpoint answered HTTP 500: the GPU caught fire');
  });

  it('names a code and falls back to a plain-text body', async () => {
    let n = 0;
    const raw = await rawServer((response) => {
      n++;
      if (n === 1) {
        response.writeHead(429, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limited' } }));
      } else {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end('Bad Gateway from the proxy');
      }
    });
    expect((await chatError(streamChat(endpoint(raw.url), request))).message).toBe('the model endpoint answered HTTP 429: slow down (rate_limited)');
    const plain = await chatError(streamChat(endpoint(raw.url), request));
    expect([plain.status, plain.message]).toEqual([502, 'the model endpoint answered HTTP 502: Bad Gateway from the proxy']);
  });

  it('reports a stream cut in the middle as stream_cut', async () => {
    const api = await scripted({ replies: [{ kind: 'broken', text: 'I started to answer and then' }] });
    const error = await chatError(streamChat(endpoint(api.url), request));
    expect(error.kind).toBe('stream_cut');
    expect(error.message).toMatch(/^the model's stream (was cut after \d+ bytes|ended after \d+ bytes without finishing)/);
  });

  it('reports a stream that ends with no finish and no [DONE] as stream_cut', async () => {
    const raw = await rawServer((response) => sse(response, chunk({ content: 'half an ans' })));
    const error = await chatError(streamChat(endpoint(raw.url), request));
    expect(error.kind).toBe('stream_cut');
    expect(error.message).toContain('without finishing (no [DONE])');
  });

  it('reports a chunk that is not JSON as bad_json, quoting it', async () => {
    const raw = await rawServer((response) => sse(response, 'data: {"choices": [\n\n'));
    const error = await chatError(streamChat(endpoint(raw.url), request));
    expect(error.kind).toBe('bad_json');
    expect(error.message).toContain('{"choices": [');
  });

  it('reports an error object inside the stream as stream_error with its message', async () => {
    const raw = await rawServer((response) => sse(response, `${chunk({ content: 'a' })}data: ${JSON.stringify({ error: { message: 'context length exceeded' } })}\n\n`));
    const error = await chatError(streamChat(endpoint(raw.url), request));
    expect(error.kind).toBe('stream_error');
    expect(error.message).toContain('context length exceeded');
  });

  it('reports a closed port as unreachable with ECONNREFUSED', async () => {
    const raw = await rawServer(() => undefined);
    const url = raw.url;
    await raw.stop();
    const error = await chatError(streamChat(endpoint(url), request));
    expect(error.kind).toBe('unreachable');
    expect(error.code).toBe('ECONNREFUSED');
    expect(error.message).toBe(`the model endpoint ${url}/v1/chat/completions is unreachable (ECONNREFUSED)`);
  });

  it('stops a held request when its signal aborts, as aborted', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const api = await scripted({ replies: [{ kind: 'text', text: 'late', holdUntil: held }] });
    const controller = new AbortController();
    const pending = streamChat(endpoint(api.url), request, controller.signal);
    await api.waitForModelRequests(1);
    controller.abort();
    const error = await chatError(pending);
    release();
    expect(error.kind).toBe('aborted');
  });
});
