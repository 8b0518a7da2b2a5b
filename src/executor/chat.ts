/**
 * A streaming chat-completions client: one `POST {baseUrl}/chat/completions` with `stream: true`,
 * the SSE `data:` chunks assembled into one reply (text, and tool calls whose id and name come in
 * their first delta and whose arguments come in pieces, matched by `index`), the usage chunk, and
 * the gateway's `X-Majordomus-Route` header.
 *
 * It never retries: failing over is the gateway's job, and the loop decides what else to do. Every
 * failure is a `ChatError` whose `kind` says what happened and whose message says it to a person.
 * Node's own fetch (undici) does the HTTP.
 */
import { SseParser } from '../platform/sse.js';
import type { ChatMessage, ToolCall, Usage } from './messages.js';

/** Where requests go. */
export interface ChatEndpoint {
  /** An OpenAI-compatible base URL, `…/v1`, without a trailing slash. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | null;
  /** Sent as `X-Majordomus-Task` when set (the gateway counts usage per task). */
  taskId: string | null;
}

/** A tool as chat completions declare it. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  /** Omitted when null: the gateway routes. */
  model: string | null;
  messages: readonly ChatMessage[];
  /** Omitted when empty (a request that must answer in text, such as a summary). */
  tools: readonly ToolSpec[];
  /** `none` keeps the declared tools but forbids calling one (the forced summary). */
  toolChoice?: 'auto' | 'none';
}

/** A failover the gateway made before this answer (`X-Majordomus-Route`). */
export interface Failover {
  provider: string;
  model: string;
  reason: string;
}

/** Which provider and model answered, as our gateway reports it. */
export interface ChatRoute {
  provider: string;
  model: string;
  failovers: Failover[];
}

export interface ChatReply {
  /** The assistant's text, joined across chunks ('' when it only called tools). */
  content: string;
  toolCalls: ToolCall[];
  /** Exactly what the server reported, or null when it reported nothing. */
  usage: Usage | null;
  route: ChatRoute | null;
  finishReason: string | null;
}

/**
 * - `unreachable`: no connection (refused, reset, DNS, unreachable network) — nothing was answered;
 * - `http`: the server answered an HTTP error status;
 * - `stream_cut`: the stream ended or broke before it was complete;
 * - `stream_error`: the server reported an error inside the stream;
 * - `bad_json`: the answer is not the JSON chat completions promise;
 * - `aborted`: our own signal stopped the request.
 */
export type ChatErrorKind = 'unreachable' | 'http' | 'stream_cut' | 'stream_error' | 'bad_json' | 'aborted';

export class ChatError extends Error {
  override name = 'ChatError';
  readonly kind: ChatErrorKind;
  /** The HTTP status, for `http`. */
  readonly status: number | null;
  /** The system error code of an `unreachable` failure (`ECONNREFUSED`, `ENOTFOUND`, …). */
  readonly code: string | null;
  /** The route header of an error answer, when the gateway failed over before giving up. */
  readonly route: ChatRoute | null;
  constructor(kind: ChatErrorKind, message: string, details: { status?: number; code?: string | null; route?: ChatRoute | null; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.status = details.status ?? null;
    this.code = details.code ?? null;
    this.route = details.route ?? null;
  }
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** An error body's message: `{error:{message}}`, `{error:"…"}`, `{message}`, or the text itself. */
function errorBodyMessage(text: string): string {
  const trimmed = text.trim();
  try {
    const body = JSON.parse(trimmed) as unknown;
    if (isRecord(body)) {
      const error = body.error;
      if (isRecord(error) && typeof error.message === 'string') {
        const code = typeof error.code === 'string' || typeof error.code === 'number' ? ` (${String(error.code)})` : '';
        return `${error.message}${code}`;
      }
      if (typeof error === 'string') return error;
      if (typeof body.message === 'string') return body.message;
    }
  } catch {
    // not JSON: the text is the message
  }
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed || '(no body)';
}

/** The system error code somewhere in a fetch failure's causes. */
function systemCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    if (typeof current.code === 'string' && current.code !== '') return current.code;
    const errors = current.errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = systemCode(errors[0]);
      if (inner !== null) return inner;
    }
    current = current.cause;
  }
  return null;
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (isRecord(error) && error.name === 'AbortError');
}

/** Parses the gateway's route header; anything malformed is ignored (it is informative only). */
export function parseRoute(header: string | null): ChatRoute | null {
  if (header === null || header.trim() === '') return null;
  try {
    const value = JSON.parse(header) as unknown;
    if (!isRecord(value) || typeof value.provider !== 'string' || typeof value.model !== 'string') return null;
    const failovers = Array.isArray(value.failovers)
      ? value.failovers.filter(isRecord).map((f) => ({ provider: String(f.provider ?? ''), model: String(f.model ?? ''), reason: String(f.reason ?? '') }))
      : [];
    return { provider: value.provider, model: value.model, failovers };
  } catch {
    return null;
  }
}

function requestBody(request: ChatRequest): string {
  const body: Record<string, unknown> = {};
  if (request.model !== null) body.model = request.model;
  body.messages = request.messages;
  if (request.tools.length > 0) {
    body.tools = request.tools;
    body.tool_choice = request.toolChoice ?? 'auto';
  }
  body.stream = true;
  body.stream_options = { include_usage: true };
  return JSON.stringify(body);
}

/** Sends one streaming request and assembles the reply. Throws `ChatError` only. */
export async function streamChat(endpoint: ChatEndpoint, request: ChatRequest, signal?: AbortSignal): Promise<ChatReply> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream, application/json' };
  if (endpoint.apiKey !== null) headers.authorization = `Bearer ${endpoint.apiKey}`;
  if (endpoint.taskId !== null) headers['x-majordomus-task'] = endpoint.taskId;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: requestBody(request), ...(signal ? { signal } : {}) });
  } catch (error) {
    if (isAbort(error, signal)) throw new ChatError('aborted', 'the model request was cancelled', { cause: error });
    const code = systemCode(error);
    if (code !== null && UNREACHABLE_CODES.has(code)) {
      throw new ChatError('unreachable', `the model endpoint ${url} is unreachable (${code})`, { code, cause: error });
    }
    throw new ChatError('unreachable', `the model endpoint ${url} could not be reached: ${describe(error)}`, { code, cause: error });
  }
  const route = parseRoute(response.headers.get('x-majordomus-route'));
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new ChatError('http', `the model endpoint answered HTTP ${response.status}: ${errorBodyMessage(text)}`, { status: response.status, route });
  }
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('application/json')) return wholeReply(await readText(response, signal), route);
  return streamedReply(response, route, signal);
}

async function readText(response: Response, signal: AbortSignal | undefined): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    if (isAbort(error, signal)) throw new ChatError('aborted', 'the model request was cancelled', { cause: error });
    throw new ChatError('stream_cut', `the model's answer was cut before it was complete: ${describe(error)}`, { cause: error });
  }
}

/** A server that ignored `stream: true` and answered one completion. */
function wholeReply(text: string, route: ChatRoute | null): ChatReply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new ChatError('bad_json', `the model's answer is not JSON: ${describe(error)}`, { cause: error });
  }
  const choice = isRecord(body) && Array.isArray(body.choices) ? (body.choices[0] as unknown) : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(body) || !isRecord(message)) throw new ChatError('bad_json', 'the model\'s answer has no choices[0].message');
  const toolCalls: ToolCall[] = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isRecord).map((call, index) => {
        const fn = isRecord(call.function) ? call.function : {};
        return toolCall(stringOr(call.id, ''), stringOr(fn.name, ''), stringOr(fn.arguments, ''), index);
      })
    : [];
  return {
    content: stringOr(message.content, ''),
    toolCalls,
    usage: usageOf(body.usage),
    route,
    finishReason: isRecord(choice) ? stringOr(choice.finish_reason, '') || null : null,
  };
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** Reads the SSE stream to `[DONE]`, assembling text and tool calls. */
async function streamedReply(response: Response, route: ChatRoute | null, signal: AbortSignal | undefined): Promise<ChatReply> {
  if (response.body === null) throw new ChatError('stream_cut', 'the model endpoint answered with no body');
  const calls = new Map<number, PartialCall>();
  let content = '';
  let usage: Usage | null = null;
  let finishReason: string | null = null;
  let done = false;
  let received = 0;

  const onData = (data: string): void => {
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (error) {
      throw new ChatError('bad_json', `the model's stream carried a chunk that is not JSON (${describe(error)}): ${data.slice(0, 200)}`, { cause: error });
    }
    if (!isRecord(chunk)) throw new ChatError('bad_json', `the model's stream carried a chunk that is not an object: ${data.slice(0, 200)}`);
    if (chunk.error !== undefined) {
      throw new ChatError('stream_error', `the model endpoint reported an error in the stream: ${errorBodyMessage(JSON.stringify({ error: chunk.error }))}`);
    }
    const reported = usageOf(chunk.usage);
    if (reported !== null) usage = reported;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isRecord(delta)) continue;
      if (typeof delta.content === 'string') content += delta.content;
      if (!Array.isArray(delta.tool_calls)) continue;
      delta.tool_calls.forEach((raw: unknown, position: number) => {
        if (!isRecord(raw)) return;
        // Some servers omit `index` when they send one call per chunk: its position stands in.
        const index = typeof raw.index === 'number' ? raw.index : position;
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        calls.set(index, call);
        if (typeof raw.id === 'string' && raw.id !== '' && call.id === '') call.id = raw.id;
        const fn = isRecord(raw.function) ? raw.function : {};
        if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
        if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      });
    }
  };

  // Every event's data is a chunk, whatever its `event` name; what follows `[DONE]` is not read.
  const parser = new SseParser((event) => {
    if (!done) onData(event.data);
  });
  const reader = response.body.getReader();
  try {
    while (!done) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        if (isAbort(error, signal)) throw new ChatError('aborted', 'the model request was cancelled', { cause: error });
        throw new ChatError('stream_cut', `the model's stream was cut after ${received} bytes: ${describe(error)}`, { cause: error });
      }
      if (read.done) break;
      received += read.value.byteLength;
      parser.push(read.value);
    }
    // A server that closed the connection right after its last chunk, without the blank line.
    if (!done) parser.end({ flush: true });
  } finally {
    // Whatever is left (after [DONE], or after a failure) is not read: let the connection go.
    await reader.cancel().catch(() => undefined);
  }
  // A stream that ended cleanly after its last choice but without `[DONE]` is complete enough; one
  // that ended with no finish at all was cut.
  if (!done && finishReason === null) {
    throw new ChatError('stream_cut', `the model's stream ended after ${received} bytes without finishing (no [DONE])`);
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call], index) => toolCall(call.id, call.name, call.arguments, index));
  return { content, toolCalls, usage, route, finishReason };
}

function toolCall(id: string, name: string, args: string, index: number): ToolCall {
  return { id: id || `call_${index}_${Date.now().toString(36)}`, type: 'function', function: { name, arguments: args === '' ? '{}' : args } };
}

function usageOf(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const prompt = value.prompt_tokens;
  const completion = value.completion_tokens;
  if (typeof prompt !== 'number' && typeof completion !== 'number') return null;
  return { prompt_tokens: typeof prompt === 'number' ? prompt : 0, completion_tokens: typeof completion === 'number' ? completion : 0 };
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
