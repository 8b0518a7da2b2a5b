/**
 * A scripted model API on loopback, so the real agent CLIs (claude, codex, gemini) run whole turns
 * offline. It speaks the three wire formats they use, answers each model request with the next
 * scripted reply, and records every request it receives so a test can prove what a CLI sent (a
 * resumed turn carries the first turn's messages).
 *
 * - Anthropic Messages: `POST /v1/messages` (claude adds `?beta=true`), SSE when `stream` is true,
 *   one JSON message otherwise.
 * - OpenAI Responses: `POST /v1/responses`, SSE when `stream` is true, one response object
 *   otherwise.
 * - Gemini: `POST /v1beta/models/M:streamGenerateContent?alt=sse` (SSE) and `…:generateContent`.
 * - OpenAI chat completions (the executor's and ollama's wire): `POST /v1/chat/completions`, SSE
 *   `data:` chunks when `stream` is true (a tool call's arguments split across three chunks, then
 *   a usage chunk and `data: [DONE]`), one completion otherwise; `GET /v1/models` lists `models`.
 *   Nothing is written before a held reply settles: a hold is a stall before the first byte.
 *
 * A `stall` reply sends the head and one chunk, then nothing until the client goes away: a
 * provider that stalls mid-stream.
 *
 * Anything else is answered 404 and recorded. A model request with no reply left is answered 400
 * and noted in `problems`, so a test fails fast and says why (the CLIs retry a 5xx for tens of
 * seconds; a 400 ends their turn at once). Text replies are streamed as one delta per word, so a
 * client must join the pieces.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { waitFor } from './wait.js';

/** The wire format a model request used. */
export type ModelApiKind = 'anthropic-messages' | 'openai-responses' | 'gemini' | 'openai-chat';

export interface ReplyUsage {
  inputTokens: number;
  outputTokens: number;
}

interface ReplyBase {
  /** Token counts reported for this reply. Default 10 in, 5 out. */
  usage?: ReplyUsage;
  /**
   * Hold the answer until this settles (a turn that stays in flight until the test lets it end:
   * follow, kill, steer). A stream has sent its head first (Anthropic `message_start`, Responses
   * `response.created`, Gemini its headers only); a non-streaming answer sends nothing before.
   */
  holdUntil?: Promise<unknown>;
}

/** The model answers with text: the turn ends. */
export interface TextReply extends ReplyBase {
  kind: 'text';
  text: string;
}

/** The model calls one of the tools the client declared: the client runs it and asks again. */
export interface ToolCallReply extends ReplyBase {
  kind: 'tool_call';
  /** The tool's name as the client declared it in the request (`Read`, `exec_command`, …). */
  name: string;
  input: Record<string, unknown>;
  /** The call id the client echoes with the tool's result. Default `call_scripted_<n>`. */
  id?: string;
  /**
   * OpenAI Responses only: the `namespace` tool the function belongs to (Codex declares an MCP
   * server's tools inside a namespace `mcp__<server>` and routes a call by both names).
   */
  namespace?: string;
}

/**
 * The API refuses the request with an HTTP error in the vendor's error shape. Mind retries, each
 * of which takes the next reply: on 400 claude re-sends five times with fewer beta features, codex
 * and gemini fail at once; claude retries 401 and codex 403 for seconds; all retry 5xx for long.
 */
export interface ErrorReply {
  kind: 'error';
  /** An HTTP error status. Default 400. */
  status?: number;
  message: string;
  /** Delay the answer until this settles. */
  holdUntil?: Promise<unknown>;
  /** Extra response headers (`Retry-After`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * OpenAI chat only: the stream starts (head and the first words of `text`), then the connection is
 * cut without `[DONE]` — a failure in the middle of a stream.
 */
export interface BrokenReply extends ReplyBase {
  kind: 'broken';
  text: string;
}

/**
 * OpenAI chat only: the stream starts (head and the first chunk, which carries the first word of
 * `text`), then nothing more is written and the connection is kept open — a provider that stalls
 * mid-stream. It ends when the client goes away (or the API stops), or, once `until` settles, with
 * the rest of `text`, the finish and `[DONE]`.
 */
export interface StallReply {
  kind: 'stall';
  text: string;
  until?: Promise<unknown>;
}

/** What the model answers with when its turn ends or when it calls a tool. */
export type ModelReply = TextReply | ToolCallReply;

/** One scripted answer to a model request. */
export type ScriptedReply = ModelReply | ErrorReply | BrokenReply | StallReply;

/** Replies consumed in order, or a function choosing one per model request (`index` from 0). */
export type ReplyScript =
  | readonly ScriptedReply[]
  | ((request: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

export interface RecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  /** The query parameters, without an API key. */
  readonly query: Readonly<Record<string, string>>;
  /** Lower-cased header names; credentials (authorization, x-api-key, x-goog-api-key) removed. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body; the raw text when it is not JSON; null when empty. */
  readonly body: unknown;
  /** The wire format, or null for a request that is not a model request (answered 404). */
  readonly api: ModelApiKind | null;
  readonly stream: boolean;
}

/**
 * One message of a request's conversation, the same shape for every wire format. A message made
 * only of tool results (Anthropic's `tool_result` blocks, Gemini's `functionResponse` parts,
 * a Responses `function_call_output`) has the role `tool`.
 */
export interface ConversationMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** The message's text parts joined by newlines; a tool call as `tool_call NAME INPUT`. */
  text: string;
}

export interface ModelApiOptions {
  /** The script; more replies can be queued later with `enqueue`. Default: none. */
  replies?: ReplyScript;
  /** What `GET /v1/models` lists. Default: `['scripted']`. */
  models?: readonly string[];
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key']);
const DEFAULT_USAGE: ReplyUsage = { inputTokens: 10, outputTokens: 5 };
const decoders: Record<string, (body: Buffer) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/** Starts a model API on 127.0.0.1 with a free port. Call `stop()` when done. */
export async function startModelApi(options: ModelApiOptions = {}): Promise<ModelApi> {
  const api = new ModelApi(options.replies ?? [], options.models ?? ['scripted']);
  await api.listen();
  return api;
}

export class ModelApi {
  /** Every request received, in order of arrival. */
  readonly requests: RecordedRequest[] = [];
  /** What went wrong on the server's side (no reply left, a script that threw, a bad body). */
  readonly problems: string[] = [];
  #queue: ScriptedReply[] = [];
  #choose: ((request: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>) | null = null;
  #answered = 0;
  #server: Server;
  #url = '';
  #stopping: Promise<void> | null = null;
  readonly #models: readonly string[];
  #inFlight = 0;
  #maxInFlight = 0;

  constructor(script: ReplyScript, models: readonly string[] = ['scripted']) {
    this.#models = models;
    if (typeof script === 'function') this.#choose = script;
    else this.#queue.push(...script);
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        this.problems.push(`handler failed: ${String(error)}`);
        if (!response.headersSent) answerJson(response, 500, { error: { message: String(error) } });
        else response.destroy();
      });
    });
  }

  /** `http://127.0.0.1:PORT`, without a trailing slash (add `/v1` where a client wants it). */
  get url(): string {
    return this.#url;
  }

  /** Model requests being answered right now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most model requests ever answered at once (a concurrency cap's proof). */
  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  /** The requests that were model requests (each consumed a reply or was refused for lack of one). */
  get modelRequests(): RecordedRequest[] {
    return this.requests.filter((request) => request.api !== null);
  }

  /** Queues more replies after the ones not yet consumed (a list script only). */
  enqueue(...replies: ScriptedReply[]): void {
    if (this.#choose) throw new Error('enqueue: this model API answers through a function, not a list');
    this.#queue.push(...replies);
  }

  /** Resolves once `count` model requests have arrived. */
  async waitForModelRequests(count: number, timeoutMs = 60_000): Promise<RecordedRequest[]> {
    await waitFor(() => this.modelRequests.length >= count, { timeoutMs, what: `${count} model request(s)` });
    return this.modelRequests;
  }

  /** @internal Binds the port; called by startModelApi. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Closes the listener and every connection, held streams included. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopping ??= new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#stopping;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const api = apiOf(request.method ?? '', url.pathname);
    let body: unknown = null;
    if (raw.length > 0) {
      const encoding = request.headers['content-encoding'];
      const decode = encoding ? decoders[encoding] : undefined;
      if (encoding && !decode) this.problems.push(`${url.pathname}: unsupported content-encoding ${encoding}`);
      const text = (decode ? await decode(raw) : raw).toString('utf8');
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const query = Object.fromEntries([...url.searchParams].filter(([name]) => name !== 'key'));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !CREDENTIAL_HEADERS.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const stream = api === 'gemini' ? url.pathname.endsWith(':streamGenerateContent') : isRecord(body) && body.stream === true;
    const recorded: RecordedRequest = { method: request.method ?? '', path: url.pathname, query, headers, body, api, stream };
    this.requests.push(recorded);

    if (api === null && recorded.method === 'GET' && recorded.path === '/v1/models') {
      answerJson(response, 200, { object: 'list', data: this.#models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })) });
      return;
    }
    if (api === null) {
      answerJson(response, 404, { error: { type: 'not_found_error', message: `no route for ${recorded.method} ${recorded.path}` } });
      return;
    }
    this.#inFlight += 1;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
    try {
      await this.#answer(recorded, api, stream, response);
    } finally {
      this.#inFlight -= 1;
    }
  }

  async #answer(recorded: RecordedRequest, api: ModelApiKind, stream: boolean, response: ServerResponse): Promise<void> {
    const index = this.#answered++;
    const reply = await this.#next(recorded, index);
    if (typeof reply === 'string') {
      this.problems.push(reply);
      answerJson(response, 400, errorBody(api, 400, reply));
      return;
    }
    if (reply.kind === 'error') {
      await reply.holdUntil;
      const status = reply.status ?? 400;
      answerJson(response, status, errorBody(api, status, reply.message), reply.headers);
      return;
    }
    const model = modelOf(recorded);
    if (reply.kind === 'broken') {
      if (api !== 'openai-chat' || !stream) {
        this.problems.push(`a broken reply needs a streaming chat completion, not ${api}${stream ? '' : ' without stream'}`);
        answerJson(response, 400, errorBody(api, 400, 'a broken reply needs a streaming chat completion'));
        return;
      }
      await reply.holdUntil;
      await writeBrokenChat(response, reply, index + 1, model);
      return;
    }
    if (reply.kind === 'stall') {
      if (api !== 'openai-chat' || !stream) {
        this.problems.push(`a stall reply needs a streaming chat completion, not ${api}${stream ? '' : ' without stream'}`);
        answerJson(response, 400, errorBody(api, 400, 'a stall reply needs a streaming chat completion'));
        return;
      }
      await writeStalledChat(response, reply, index + 1, model);
      return;
    }
    const writer = WRITERS[api];
    if (stream) await writer.stream(response, reply, index + 1, model);
    else {
      await reply.holdUntil;
      answerJson(response, 200, writer.whole(reply, index + 1, model));
    }
  }

  /** The reply for this request, or why there is none. */
  async #next(request: RecordedRequest, index: number): Promise<ScriptedReply | string> {
    const what = `model request ${index + 1} (${request.method} ${request.path})`;
    if (this.#choose) {
      try {
        return await this.#choose(request, index);
      } catch (error) {
        return `the reply function threw for ${what}: ${String(error)}`;
      }
    }
    return this.#queue.shift() ?? `the script has no reply left for ${what}`;
  }
}

/** The conversation a model request carries, oldest first, whatever its wire format. */
export function conversationOf(request: RecordedRequest): ConversationMessage[] {
  if (!isRecord(request.body)) return [];
  const body = request.body;
  switch (request.api) {
    case 'anthropic-messages':
      return list(body.messages).map((message) => {
        if (typeof message.content === 'string') return { role: roleOf(message.role), text: message.content };
        const blocks = list(message.content);
        return { role: allAre(blocks, (block) => block.type === 'tool_result') ? 'tool' : roleOf(message.role), text: blocks.map(anthropicBlockText).join('\n') };
      });
    case 'openai-responses':
      return list(body.input).map(responsesItemMessage);
    case 'gemini':
      return list(body.contents).map((content) => {
        const parts = list(content.parts);
        const role = allAre(parts, (part) => isRecord(part.functionResponse)) ? 'tool' : content.role === 'model' ? 'assistant' : roleOf(content.role);
        return { role, text: parts.map(geminiPartText).join('\n') };
      });
    case 'openai-chat':
      return list(body.messages).map((message) => {
        const content = message.content;
        const parts = typeof content === 'string' ? [content] : list(content).map((part) => String(part.text ?? ''));
        const calls = list(message.tool_calls).map((call) => (isRecord(call.function) ? toolCallText(call.function.name, call.function.arguments) : ''));
        return { role: roleOf(message.role), text: [...parts.filter((part) => part !== ''), ...calls].join('\n') };
      });
    default:
      return [];
  }
}

// ---- wire formats ----

interface ReplyWriter {
  stream(response: ServerResponse, reply: ModelReply, n: number, model: string): Promise<void>;
  whole(reply: ModelReply, n: number, model: string): unknown;
}

const WRITERS: Record<ModelApiKind, ReplyWriter> = {
  'anthropic-messages': {
    async stream(response, reply, n, model) {
      const usage = reply.usage ?? DEFAULT_USAGE;
      const sse = openSse(response);
      sse.event('message_start', {
        type: 'message_start',
        message: { ...anthropicMessageHead(n, model), content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.inputTokens, output_tokens: 1 } },
      });
      await reply.holdUntil;
      if (reply.kind === 'text') {
        sse.event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
        for (const piece of pieces(reply.text)) {
          sse.event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } });
        }
      } else {
        const block = { type: 'tool_use', id: callId(reply, n), name: reply.name, input: {} };
        sse.event('content_block_start', { type: 'content_block_start', index: 0, content_block: block });
        sse.event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
      }
      sse.event('content_block_stop', { type: 'content_block_stop', index: 0 });
      sse.event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
        usage: { output_tokens: usage.outputTokens },
      });
      sse.event('message_stop', { type: 'message_stop' });
      sse.end();
    },
    whole(reply, n, model) {
      const usage = reply.usage ?? DEFAULT_USAGE;
      const content = reply.kind === 'text' ? [{ type: 'text', text: reply.text }] : [{ type: 'tool_use', id: callId(reply, n), name: reply.name, input: reply.input }];
      return {
        ...anthropicMessageHead(n, model),
        content,
        stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
      };
    },
  },

  'openai-responses': {
    async stream(response, reply, n, model) {
      const sse = openSse(response);
      let sequence = 0;
      const event = (type: string, data: Record<string, unknown>): void => sse.event(type, { type, sequence_number: sequence++, ...data });
      const head = responsesHead(n, model);
      event('response.created', { response: { ...head, status: 'in_progress', output: [] } });
      await reply.holdUntil;
      const item = responsesItem(reply, n);
      if (reply.kind === 'text') {
        const id = item.id;
        event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
        event('response.content_part.added', { item_id: id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        for (const piece of pieces(reply.text)) event('response.output_text.delta', { item_id: id, output_index: 0, content_index: 0, delta: piece });
        event('response.output_text.done', { item_id: id, output_index: 0, content_index: 0, text: reply.text });
        event('response.content_part.done', { item_id: id, output_index: 0, content_index: 0, part: { type: 'output_text', text: reply.text, annotations: [] } });
      } else {
        const args = JSON.stringify(reply.input);
        event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
        event('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: args });
        event('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: args });
      }
      event('response.output_item.done', { output_index: 0, item });
      event('response.completed', { response: { ...head, status: 'completed', output: [item], usage: responsesUsage(reply) } });
      sse.end();
    },
    whole(reply, n, model) {
      return { ...responsesHead(n, model), status: 'completed', output: [responsesItem(reply, n)], usage: responsesUsage(reply) };
    },
  },

  'openai-chat': {
    async stream(response, reply, n, model) {
      // Chat completions have no opening event: a held reply has written nothing at all.
      await reply.holdUntil;
      const sse = openSse(response);
      sse.data(chatChunk(n, model, { role: 'assistant', content: '' }, null));
      if (reply.kind === 'text') {
        for (const piece of pieces(reply.text)) sse.data(chatChunk(n, model, { content: piece }, null));
      } else {
        thirds(JSON.stringify(reply.input)).forEach((args, i) => {
          const call = i === 0 ? { index: 0, id: callId(reply, n), type: 'function', function: { name: reply.name, arguments: args } } : { index: 0, function: { arguments: args } };
          sse.data(chatChunk(n, model, { tool_calls: [call] }, null));
        });
      }
      sse.data(chatChunk(n, model, {}, reply.kind === 'text' ? 'stop' : 'tool_calls'));
      sse.data({ id: `chatcmpl_scripted_${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [], usage: chatUsage(reply.usage ?? DEFAULT_USAGE) });
      sse.raw('data: [DONE]\n\n');
      sse.end();
    },
    whole(reply, n, model) {
      const message =
        reply.kind === 'text'
          ? { role: 'assistant', content: reply.text }
          : { role: 'assistant', content: null, tool_calls: [{ id: callId(reply, n), type: 'function', function: { name: reply.name, arguments: JSON.stringify(reply.input) } }] };
      return {
        id: `chatcmpl_scripted_${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message, finish_reason: reply.kind === 'text' ? 'stop' : 'tool_calls' }],
        usage: chatUsage(reply.usage ?? DEFAULT_USAGE),
      };
    },
  },

  gemini: {
    async stream(response, reply, n, model) {
      const sse = openSse(response);
      const usage = reply.usage ?? DEFAULT_USAGE;
      const chunk = (parts: unknown[], last: boolean): void =>
        sse.data({
          candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
          ...(last ? { usageMetadata: geminiUsage(usage) } : {}),
          modelVersion: model,
          responseId: `gemini_scripted_${n}`,
        });
      const chunks: unknown[][] =
        reply.kind === 'text' ? pieces(reply.text).map((text) => [{ text }]) : [[{ functionCall: { name: reply.name, args: reply.input } }]];
      // Gemini has no opening event: a held stream has sent its headers and nothing else.
      await reply.holdUntil;
      if (chunks.length === 0) chunks.push([{ text: '' }]);
      chunks.forEach((parts, i) => chunk(parts, i === chunks.length - 1));
      sse.end();
    },
    whole(reply, n, model) {
      const part = reply.kind === 'text' ? { text: reply.text } : { functionCall: { name: reply.name, args: reply.input } };
      return {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: geminiUsage(reply.usage ?? DEFAULT_USAGE),
        modelVersion: model,
        responseId: `gemini_scripted_${n}`,
      };
    },
  },
};

/** One chat-completion chunk (`data:` of the stream). */
function chatChunk(n: number, model: string, delta: Record<string, unknown>, finish: string | null): Record<string, unknown> {
  return { id: `chatcmpl_scripted_${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

function chatUsage(usage: ReplyUsage): Record<string, number> {
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

/** A string cut in three (or fewer) pieces: tool-call arguments as servers stream them. */
function thirds(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length > 0 ? out : [''];
}

async function writeBrokenChat(response: ServerResponse, reply: BrokenReply, n: number, model: string): Promise<void> {
  const sse = openSse(response);
  sse.data(chatChunk(n, model, { role: 'assistant', content: '' }, null));
  for (const piece of pieces(reply.text)) sse.data(chatChunk(n, model, { content: piece }, null));
  // Let the pieces leave before the cut, so the client has truly seen the stream begin.
  await new Promise<void>((resolve) => response.write('', () => resolve()));
  response.destroy();
}

async function writeStalledChat(response: ServerResponse, reply: StallReply, n: number, model: string): Promise<void> {
  const sse = openSse(response);
  const [first = '', ...rest] = pieces(reply.text);
  sse.data(chatChunk(n, model, { role: 'assistant', content: first }, null));
  // Stalled: the request stays in flight (and counted in `inFlight`) until the client goes away.
  const gone = new Promise<void>((resolve) => response.once('close', () => resolve()));
  await Promise.race([gone, reply.until ?? new Promise<never>(() => undefined)]);
  if (response.destroyed) return;
  for (const piece of rest) sse.data(chatChunk(n, model, { content: piece }, null));
  sse.data(chatChunk(n, model, {}, 'stop'));
  sse.raw('data: [DONE]\n\n');
  sse.end();
}

/** An error body in the shape each API uses (the CLIs print its message). */
function errorBody(api: ModelApiKind, status: number, message: string): unknown {
  switch (api) {
    case 'anthropic-messages':
      return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message } };
    case 'openai-responses':
      return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
    case 'gemini':
      return { error: { code: status, message, status: status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' } };
    case 'openai-chat':
      return { error: { message, type: status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
  }
}

function anthropicMessageHead(n: number, model: string): Record<string, unknown> {
  return { id: `msg_scripted_${n}`, type: 'message', role: 'assistant', model };
}

function responsesHead(n: number, model: string): Record<string, unknown> {
  return { id: `resp_scripted_${n}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
}

function responsesItem(reply: ModelReply, n: number): Record<string, unknown> & { id: string } {
  if (reply.kind === 'text') {
    return { id: `msg_scripted_${n}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  }
  return {
    id: `fc_scripted_${n}`,
    type: 'function_call',
    status: 'completed',
    call_id: callId(reply, n),
    name: reply.name,
    ...(reply.namespace === undefined ? {} : { namespace: reply.namespace }),
    arguments: JSON.stringify(reply.input),
  };
}

function responsesUsage(reply: ModelReply): Record<string, unknown> {
  const usage = reply.usage ?? DEFAULT_USAGE;
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

function geminiUsage(usage: ReplyUsage): Record<string, number> {
  return { promptTokenCount: usage.inputTokens, candidatesTokenCount: usage.outputTokens, totalTokenCount: usage.inputTokens + usage.outputTokens };
}

function callId(reply: ToolCallReply, n: number): string {
  return reply.id ?? `call_scripted_${n}`;
}

/** The text as streamed: one piece per word, each with the whitespace that follows it. */
export function pieces(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

interface SseWriter {
  event(type: string, data: unknown): void;
  data(data: unknown): void;
  raw(text: string): void;
  end(): void;
}

/** Server-sent events on `response`; writes after the client went away are dropped. */
function openSse(response: ServerResponse): SseWriter {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
  const write = (text: string): void => {
    if (!response.destroyed && !response.writableEnded) response.write(text);
  };
  return {
    event: (type, data) => write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`),
    data: (data) => write(`data: ${JSON.stringify(data)}\n\n`),
    raw: write,
    end: () => {
      if (!response.destroyed && !response.writableEnded) response.end();
    },
  };
}

function answerJson(response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function apiOf(method: string, path: string): ModelApiKind | null {
  if (method !== 'POST') return null;
  if (path === '/v1/messages') return 'anthropic-messages';
  if (path === '/v1/responses') return 'openai-responses';
  if (path === '/v1/chat/completions') return 'openai-chat';
  if (/^\/v1(beta)?\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path)) return 'gemini';
  return null;
}

function modelOf(request: RecordedRequest): string {
  if (request.api === 'gemini') return decodeURIComponent(/\/models\/([^/:]+):/.exec(request.path)?.[1] ?? 'scripted');
  return isRecord(request.body) && typeof request.body.model === 'string' ? request.body.model : 'scripted';
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// ---- conversations ----

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** True for a non-empty list whose every element passes (a message made only of tool results). */
function allAre<T>(items: readonly T[], test: (item: T) => boolean): boolean {
  return items.length > 0 && items.every(test);
}

function roleOf(role: unknown): ConversationMessage['role'] {
  return role === 'system' || role === 'developer' || role === 'assistant' || role === 'tool' ? role : 'user';
}

function toolCallText(name: unknown, input: unknown): string {
  return `tool_call ${String(name)} ${typeof input === 'string' ? input : JSON.stringify(input)}`;
}

function anthropicBlockText(block: Record<string, unknown>): string {
  if (block.type === 'text') return String(block.text ?? '');
  if (block.type === 'tool_use') return toolCallText(block.name, block.input);
  if (block.type === 'tool_result') {
    return typeof block.content === 'string' ? block.content : list(block.content).map(anthropicBlockText).join('\n');
  }
  return '';
}

function responsesItemMessage(item: Record<string, unknown>): ConversationMessage {
  if (item.type === 'function_call') return { role: 'assistant', text: toolCallText(item.name, item.arguments) };
  if (item.type === 'function_call_output') {
    const output = item.output;
    return { role: 'tool', text: typeof output === 'string' ? output : list(output).map((part) => String(part.text ?? '')).join('\n') };
  }
  const content = item.content;
  const text = typeof content === 'string' ? content : list(content).map((part) => String(part.text ?? '')).join('\n');
  return { role: roleOf(item.role), text };
}

function geminiPartText(part: Record<string, unknown>): string {
  if (typeof part.text === 'string') return part.text;
  if (isRecord(part.functionCall)) return toolCallText(part.functionCall.name, part.functionCall.args);
  if (isRecord(part.functionResponse)) return JSON.stringify(part.functionResponse.response ?? null);
  return '';
}
