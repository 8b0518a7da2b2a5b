/**
 * A chat-completions answer in Anthropic's words: the parts a whole answer (here) and a streamed
 * one (anthropic-stream.ts) share — the stop reason, the usage, a tool call's input, an id — and
 * the whole answer itself, a `message` with `text` and `tool_use` blocks.
 */
import { randomBytes } from 'node:crypto';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An id in Anthropic's form (`msg_…`, `toolu_…`) for what the provider gave none. */
export function newId(prefix: 'msg' | 'toolu'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/**
 * Anthropic's stop reason for a chat-completions finish reason. A turn that called a tool is
 * `tool_use` whatever the provider said (some, ollama among them, finish such a turn with `stop`):
 * that is what makes Claude Code run the tool.
 */
export function stopReason(finish: unknown, calledTools: boolean): string {
  if (calledTools) return 'tool_use';
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return 'end_turn';
  }
}

/** Anthropic's usage for a chat-completions `usage` (its cached prompt tokens apart, as Anthropic counts them). */
export function anthropicUsage(usage: unknown): Json {
  const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  if (!isRecord(usage)) return { input_tokens: 0, output_tokens: 0 };
  const prompt = count(usage.prompt_tokens);
  const cached = Math.min(prompt, isRecord(usage.prompt_tokens_details) ? count(usage.prompt_tokens_details.cached_tokens) : 0);
  return {
    input_tokens: prompt - cached,
    output_tokens: count(usage.completion_tokens),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

/**
 * A tool call's arguments (JSON text) as a `tool_use` input. Arguments that are not a JSON object
 * are kept under `_unparsed_arguments`, so the client's check of the input refuses the call and
 * tells the model why, instead of running it with nothing.
 */
export function toolInput(text: string): Json {
  if (text.trim() === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (isRecord(parsed)) return parsed;
  } catch {
    // not JSON: below
  }
  return { _unparsed_arguments: text };
}

/** A whole chat completion (parsed JSON) as an Anthropic `message`; null when it is not one. */
export function anthropicMessage(completion: unknown, model: string): Json | null {
  if (!isRecord(completion) || !Array.isArray(completion.choices)) return null;
  const choice = completion.choices[0];
  const message = isRecord(choice) && isRecord(choice.message) ? choice.message : {};
  const content: Json[] = [];
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
  for (const call of calls) {
    const fn = isRecord(call.function) ? call.function : {};
    content.push({
      type: 'tool_use',
      id: typeof call.id === 'string' && call.id !== '' ? call.id : newId('toolu'),
      name: typeof fn.name === 'string' ? fn.name : '',
      input: toolInput(typeof fn.arguments === 'string' ? fn.arguments : ''),
    });
  }
  return {
    id: typeof completion.id === 'string' && completion.id !== '' ? `msg_${completion.id}` : newId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(isRecord(choice) ? choice.finish_reason : null, calls.length > 0),
    stop_sequence: null,
    usage: anthropicUsage(completion.usage),
  };
}
