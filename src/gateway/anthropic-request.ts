/**
 * An Anthropic Messages request, as Claude Code sends it, read into the chat-completions body the
 * providers take. What has a counterpart is carried over: the system prompt (a string or text
 * blocks), the conversation (text, images, `tool_use` as `tool_calls`, each `tool_result` as a
 * `tool` message placed right after the call it answers), tools with their `input_schema`,
 * `tool_choice`, `max_tokens`, `stop_sequences`, `temperature`, `top_p` and `stream`. What has none
 * is left out: thinking blocks and `thinking` (their signatures mean nothing to another model), the
 * server-side tools that carry no `input_schema`, `metadata`, `top_k`, `context_management`,
 * `output_config` (the chain entry's `reasoning_effort` decides effort), and Claude Code's billing
 * line (`x-anthropic-billing-header: …`, a system block addressed to Anthropic's API, not the model).
 *
 * Claude Code also sends `system` messages inside the conversation (its environment, after the
 * first prompt). Those before the first assistant message join the leading system message — the
 * shape every chat template takes (some refuse a system message after a user one); later ones stay
 * where they are.
 */
import type { BodyReading } from './front.js';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A refusal of the request: Anthropic's API answers a malformed one with 400 too. */
class Malformed extends Error {}

/** Claude Code's billing line, a system block for Anthropic's API. */
const BILLING_LINE = /^x-anthropic-billing-header:/;

/** The text of blocks (or a string), joined by newlines; `other` words a block that is not text. */
function textOf(content: unknown, other: (block: Json) => string | null = () => null): string {
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const block of list(content)) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      if (!BILLING_LINE.test(block.text)) parts.push(block.text);
    } else {
      const said = other(block);
      if (said !== null) parts.push(said);
    }
  }
  return parts.join('\n');
}

/** An image block as a chat-completions image part, or null when its source is not one we read. */
function imagePart(block: Json): Json | null {
  const source = block.source;
  if (!isRecord(source)) return null;
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  return null;
}

/** How a block that cannot travel is named in the text instead, so the model knows it was there. */
function placeholder(block: Json): string | null {
  switch (block.type) {
    case 'image':
      return '[an image was here: the provider\'s tool messages carry text only]';
    case 'document': {
      const source = isRecord(block.source) ? block.source : {};
      if (source.type === 'text' && typeof source.data === 'string') return source.data;
      return `[a document (${typeof source.media_type === 'string' ? source.media_type : 'unknown type'}) was here: it cannot be passed on as text]`;
    }
    case 'tool_reference':
      return typeof block.tool_name === 'string' ? `[tool ${block.tool_name} is now available]` : null;
    default:
      return null; // thinking and Anthropic's server-side blocks: nothing the provider can use
  }
}

/** A user message's blocks: its tool results as `tool` messages first, then the rest as one user message. */
function userMessages(content: unknown, at: string): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: Json[] = [];
  const parts: Json[] = [];
  for (const [index, block] of list(content).entries()) {
    if (!isRecord(block)) throw new Malformed(`${at}.content[${index}] must be a content block object`);
    if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string') throw new Malformed(`${at}.content[${index}].tool_use_id must be a string`);
      const text = textOf(block.content, placeholder);
      tools.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `Error: ${text}` : text });
    } else if (block.type === 'text' && typeof block.text === 'string') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      parts.push(imagePart(block) ?? { type: 'text', text: '[an image was here in a form the gateway does not pass on]' });
    } else {
      const said = placeholder(block);
      if (said !== null) parts.push({ type: 'text', text: said });
    }
  }
  if (parts.length === 0) return tools;
  const allText = parts.every((part) => part.type === 'text');
  return [...tools, { role: 'user', content: allText ? parts.map((part) => part.text).join('\n') : parts }];
}

/** An assistant message: its text, and each `tool_use` as a tool call (its input as JSON text). */
function assistantMessage(content: unknown, at: string): Json {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: Json[] = [];
  for (const [index, block] of list(content).entries()) {
    if (!isRecord(block)) throw new Malformed(`${at}.content[${index}] must be a content block object`);
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw new Malformed(`${at}.content[${index}]: a tool_use needs an id and a name`);
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const text = texts.join('\n');
  if (calls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text === '' ? null : text, tool_calls: calls };
}

function toolsOf(tools: unknown): Json[] {
  const out: Json[] = [];
  for (const tool of list(tools)) {
    // Anthropic's own tools (web search, code execution, …) name a `type` and no schema: the
    // provider cannot run them.
    if (!isRecord(tool) || typeof tool.name !== 'string' || !isRecord(tool.input_schema)) continue;
    const fn: Json = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') fn.description = tool.description;
    out.push({ type: 'function', function: fn });
  }
  return out;
}

function toolChoiceOf(choice: Json): unknown {
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return typeof choice.name === 'string' ? { type: 'function', function: { name: choice.name } } : 'required';
    default:
      return 'auto';
  }
}

/** A parsed Messages body as a chat-completions body; or what is wrong with it. */
export function readMessagesBody(value: unknown): BodyReading {
  if (!isRecord(value)) return { ok: false, code: 'invalid_json', message: 'the body must be a JSON object (a Messages request)' };
  const { model } = value;
  if (typeof model !== 'string' || model === '') return { ok: false, code: 'invalid_input', message: 'model must be a non-empty string (a model the gateway serves, or a claude-… name to follow the priority chain)' };
  if (!Array.isArray(value.messages)) return { ok: false, code: 'invalid_input', message: 'messages must be an array of {role, content}' };
  const leading: string[] = [];
  const conversation: Json[] = [];
  try {
    const system = textOf(value.system);
    if (system !== '') leading.push(system);
    let answered = false;
    for (const [index, message] of value.messages.entries()) {
      const at = `messages[${index}]`;
      if (!isRecord(message)) throw new Malformed(`${at} must be an object {role, content}`);
      if (message.role === 'user') conversation.push(...userMessages(message.content, at));
      else if (message.role === 'assistant') {
        answered = true;
        conversation.push(assistantMessage(message.content, at));
      } else if (message.role === 'system') {
        const text = textOf(message.content, placeholder);
        if (!answered) leading.push(text);
        else conversation.push({ role: 'system', content: text });
      } else throw new Malformed(`${at}.role must be user or assistant, not ${JSON.stringify(message.role)}`);
    }
  } catch (error) {
    if (error instanceof Malformed) return { ok: false, code: 'invalid_input', message: error.message };
    throw error;
  }
  const messages: Json[] = leading.length > 0 ? [{ role: 'system', content: leading.join('\n\n') }, ...conversation] : conversation;
  const stream = value.stream === true;
  const body: Json = { messages };
  if (typeof value.max_tokens === 'number') body.max_tokens = value.max_tokens;
  if (Array.isArray(value.stop_sequences) && value.stop_sequences.length > 0) body.stop = value.stop_sequences;
  if (typeof value.temperature === 'number') body.temperature = value.temperature;
  if (typeof value.top_p === 'number') body.top_p = value.top_p;
  const tools = toolsOf(value.tools);
  if (tools.length > 0) {
    body.tools = tools;
    if (isRecord(value.tool_choice)) {
      body.tool_choice = toolChoiceOf(value.tool_choice);
      if (value.tool_choice.disable_parallel_tool_use === true) body.parallel_tool_calls = false;
    }
  }
  if (stream) body.stream = true;
  return { ok: true, chat: { body, model, stream } };
}
