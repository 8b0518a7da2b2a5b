/**
 * One streamed chat-completions answer, event by event, as Anthropic's Messages stream:
 * `message_start` at the first chunk; each run of text a `text` block (`text_delta`); each tool
 * call a `tool_use` block whose arguments arrive as `input_json_delta` pieces, however the provider
 * split them across chunks; `message_delta` (the stop reason and the usage of the provider's usage
 * chunk, which comes after its finish reason) and `message_stop` once the provider's stream is
 * over (`[DONE]`, or its end). A provider's error chunk becomes an `error` event, the last.
 *
 * Anthropic's blocks follow one another: a tool call is streamed while it is the open block, and a
 * provider that went back to a call after starting the next (none known does) ends the stream with
 * an error rather than a call with half its arguments.
 */
import type { SseEvent } from '../platform/sse.js';
import { anthropicUsage, newId, stopReason } from './anthropic-answer.js';
import type { StreamTranslator } from './front.js';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One SSE event of Anthropic's stream. */
export function anthropicEvent(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Anthropic's `error` event. */
export function anthropicErrorEvent(type: string, message: string, code?: string): string {
  return anthropicEvent('error', { error: { type, message, ...(code === undefined ? {} : { code }) } });
}

interface ToolCall {
  id: string;
  name: string;
  /** Its block's index once opened. */
  block: number | null;
  /** Argument pieces that came before its name (its block could not open yet). */
  pending: string[];
  closed: boolean;
}

export class AnthropicStream implements StreamTranslator {
  readonly #model: string;
  #started = false;
  #ended = false;
  #nextBlock = 0;
  /** The open block: text, or the tool call of that index. */
  #open: { block: number; call: number | null } | null = null;
  readonly #calls = new Map<number, ToolCall>();
  #finish: unknown = null;
  #usage: unknown = null;

  constructor(model: string) {
    this.#model = model;
  }

  event({ data }: SseEvent): string {
    if (this.#ended) return '';
    if (data.trim() === '[DONE]') return this.#finishAll();
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return ''; // not JSON: nothing Anthropic's stream could carry
    }
    if (!isRecord(chunk)) return '';
    let out = this.#start(chunk);
    if (chunk.error !== undefined && chunk.error !== null) {
      this.#ended = true;
      const error = chunk.error;
      const message = isRecord(error) && typeof error.message === 'string' ? error.message : typeof error === 'string' ? error : JSON.stringify(error);
      return out + anthropicErrorEvent('api_error', `the provider reported an error in its stream: ${message}`);
    }
    if (isRecord(chunk.usage)) this.#usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) return out;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') out += this.#text(delta.content);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (!isRecord(call)) continue;
        const piece = this.#tool(call);
        if (piece === null) return out + this.#fail('the provider went back to a tool call after starting the next one; its arguments cannot be streamed as Anthropic blocks');
        out += piece;
      }
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.#finish = choice.finish_reason;
      out += this.#closeOpen();
    }
    return out;
  }

  end(): string {
    return this.#finishAll();
  }

  #start(chunk: Json): string {
    if (this.#started) return '';
    this.#started = true;
    const id = typeof chunk.id === 'string' && chunk.id !== '' ? `msg_${chunk.id}` : newId('msg');
    const message = { id, type: 'message', role: 'assistant', model: this.#model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return anthropicEvent('message_start', { message });
  }

  #text(text: string): string {
    let out = '';
    if (this.#open === null || this.#open.call !== null) {
      out += this.#closeOpen();
      out += this.#openBlock(null, { type: 'text', text: '' });
    }
    return out + anthropicEvent('content_block_delta', { index: (this.#open as { block: number }).block, delta: { type: 'text_delta', text } });
  }

  /** One tool-call delta; null when it belongs to a call whose block has closed. */
  #tool(delta: Json): string | null {
    const index = this.#indexOf(delta);
    let call = this.#calls.get(index);
    if (!call) {
      call = { id: '', name: '', block: null, pending: [], closed: false };
      this.#calls.set(index, call);
    }
    if (call.closed) return null;
    const fn = isRecord(delta.function) ? delta.function : {};
    if (call.id === '' && typeof delta.id === 'string') call.id = delta.id;
    if (call.name === '' && typeof fn.name === 'string') call.name = fn.name;
    const piece = typeof fn.arguments === 'string' ? fn.arguments : '';
    let out = '';
    if (call.block === null) {
      if (piece !== '') call.pending.push(piece);
      if (call.name === '') return out;
      out += this.#openCall(index, call);
      return out;
    }
    if (this.#open?.call !== index) return null;
    if (piece !== '') out += anthropicEvent('content_block_delta', { index: call.block, delta: { type: 'input_json_delta', partial_json: piece } });
    return out;
  }

  /** The call a delta belongs to: its `index`, else a new id's next index, else the last call. */
  #indexOf(delta: Json): number {
    if (typeof delta.index === 'number') return delta.index;
    const last = [...this.#calls.keys()].at(-1);
    if (typeof delta.id === 'string' && delta.id !== '' && ![...this.#calls.values()].some((call) => call.id === delta.id)) return last === undefined ? 0 : last + 1;
    return last ?? 0;
  }

  #openCall(index: number, call: ToolCall): string {
    let out = this.#closeOpen();
    if (call.id === '') call.id = newId('toolu');
    out += this.#openBlock(index, { type: 'tool_use', id: call.id, name: call.name, input: {} });
    call.block = (this.#open as { block: number }).block;
    for (const piece of call.pending.splice(0)) out += anthropicEvent('content_block_delta', { index: call.block, delta: { type: 'input_json_delta', partial_json: piece } });
    return out;
  }

  #openBlock(call: number | null, block: Json): string {
    const index = this.#nextBlock++;
    this.#open = { block: index, call };
    return anthropicEvent('content_block_start', { index, content_block: block });
  }

  #closeOpen(): string {
    const open = this.#open;
    if (open === null) return '';
    this.#open = null;
    if (open.call !== null) (this.#calls.get(open.call) as ToolCall).closed = true;
    return anthropicEvent('content_block_stop', { index: open.block });
  }

  #finishAll(): string {
    if (this.#ended) return '';
    let out = this.#start({});
    out += this.#closeOpen();
    // A call whose name never came is still passed on: the client refuses it and says so.
    for (const [index, call] of this.#calls) {
      if (call.block !== null) continue;
      out += this.#openCall(index, call) + this.#closeOpen();
    }
    this.#ended = true;
    const stop = stopReason(this.#finish, this.#calls.size > 0);
    out += anthropicEvent('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: anthropicUsage(this.#usage) });
    return out + anthropicEvent('message_stop', {});
  }

  #fail(message: string): string {
    this.#ended = true;
    return anthropicErrorEvent('api_error', message);
  }
}
