/**
 * A chat-completions answer in Anthropic's words, whole and streamed:
 * - a whole completion becomes a message with text and tool_use blocks, its stop reason (a call
 *   finished as `stop` is still `tool_use`; `length` is `max_tokens`) and usage (cached prompt
 *   tokens apart); arguments that are not a JSON object are kept visibly, not dropped;
 * - a stream: message_start at the first chunk; text as one block of text_delta pieces; tool calls
 *   as tool_use blocks whose argument pieces come as input_json_delta, the block opening once the
 *   call's name is known (pieces before it held back); text after a call opens a new block; a call
 *   without `index` goes by its id; message_delta (stop reason, the usage chunk's tokens) and
 *   message_stop once [DONE] or the end comes, once;
 * - a provider's error chunk ends it with an `error` event; so does a delta for a call whose
 *   block has already closed; an empty stream still ends as a whole message;
 * - the gateway's own refusals in Anthropic's shape, our code beside its type (only a full queue
 *   is `overloaded_error`).
 */
import { describe, expect, it } from 'vitest';
import { anthropicMessage, stopReason, toolInput } from '../../../src/gateway/anthropic-answer.js';
import { anthropicError } from '../../../src/gateway/anthropic-front.js';
import { AnthropicStream } from '../../../src/gateway/anthropic-stream.js';

type Event = { event: string; data: Record<string, any> };

function parse(text: string): Event[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [head, body] = block.split('\n');
      return { event: (head ?? '').replace(/^event: /, ''), data: JSON.parse((body ?? '').replace(/^data: /, '')) as Record<string, any> };
    });
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string => JSON.stringify({ id: 'c1', choices: [{ index: 0, delta, finish_reason: finish }] });

/** Feeds the data of each event, then the end; answers every event the client got. */
function run(datas: readonly string[], withEnd = true): Event[] {
  const stream = new AnthropicStream('m1');
  let out = '';
  for (const data of datas) out += stream.event({ event: 'message', data, id: '' });
  if (withEnd) out += stream.end();
  return parse(out);
}

describe('a whole answer', () => {
  it('becomes a message with text and tool_use blocks, its stop reason and usage', () => {
    const message = anthropicMessage(
      {
        id: 'x',
        choices: [{ message: { content: 'Looking.', tool_calls: [{ id: 'call_1', function: { name: 'Read', arguments: '{"file_path":"/a"}' } }, { function: { name: 'Bad', arguments: 'not json' } }] }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } },
      },
      'm1',
    );
    expect(message).toMatchObject({
      id: 'msg_x',
      type: 'message',
      role: 'assistant',
      model: 'm1',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'call_1', name: 'Read', input: { file_path: '/a' } },
        { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bad', input: { _unparsed_arguments: 'not json' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 7, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 },
    });
    expect(anthropicMessage({ object: 'error' }, 'm1')).toBeNull();
  });

  it('maps the finish reasons', () => {
    expect([stopReason('stop', false), stopReason('length', false), stopReason('tool_calls', false), stopReason('content_filter', false), stopReason(null, false)]).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
      'end_turn',
    ]);
    expect(toolInput('')).toEqual({});
    expect(toolInput('[1]')).toEqual({ _unparsed_arguments: '[1]' });
  });
});

describe('a streamed answer', () => {
  it('streams text as text_delta pieces, then the stop reason and the usage chunk\'s tokens', () => {
    const events = run([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2 } }),
      '[DONE]',
    ]);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[0]?.data.message).toMatchObject({ id: 'msg_c1', model: 'm1', role: 'assistant', content: [] });
    expect(events.slice(2, 4).map((e) => e.data.delta)).toEqual([{ type: 'text_delta', text: 'Hel' }, { type: 'text_delta', text: 'lo' }]);
    expect(events[5]?.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
  });

  it('streams tool calls split across chunks as input_json_delta pieces, one block each, text after them a new block', () => {
    const events = run([
      chunk({ content: 'Let me look.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'Read', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"file_' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'path":"/a"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] }),
      chunk({ content: 'and more' }),
      chunk({}, 'tool_calls'),
    ]);
    const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data);
    expect(starts).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'Read', input: {} } },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_b', name: 'Bash', input: {} } },
      { type: 'content_block_start', index: 3, content_block: { type: 'text', text: '' } },
    ]);
    const json = (index: number): string =>
      events
        .filter((e) => e.event === 'content_block_delta' && e.data.index === index)
        .map((e) => e.data.delta.partial_json)
        .join('');
    expect(JSON.parse(json(1))).toEqual({ file_path: '/a' });
    expect(JSON.parse(json(2))).toEqual({ command: 'ls' });
    expect(events.filter((e) => e.event === 'content_block_stop').map((e) => e.data.index)).toEqual([0, 1, 2, 3]);
    expect(events.at(-2)?.data.delta.stop_reason).toBe('tool_use');
    // No [DONE]: the end of the provider's stream ended it, once.
    expect(events.at(-1)?.event).toBe('message_stop');
  });

  it('holds argument pieces back until the call\'s name comes, and goes by id when a provider sends no index', () => {
    const events = run([
      chunk({ tool_calls: [{ id: 'call_x', function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ id: 'call_x', function: { name: 'T', arguments: '1}' } }] }),
      chunk({ tool_calls: [{ id: 'call_y', function: { name: 'U', arguments: '{}' } }] }),
      // A finish reason of `stop` with calls made: still tool_use (ollama finishes so).
      chunk({}, 'stop'),
      '[DONE]',
    ]);
    const blocks = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block);
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'call_x', name: 'T', input: {} },
      { type: 'tool_use', id: 'call_y', name: 'U', input: {} },
    ]);
    expect(events.filter((e) => e.event === 'content_block_delta' && e.data.index === 0).map((e) => e.data.delta.partial_json)).toEqual(['{"a":', '1}']);
    expect(events.at(-2)?.data.delta.stop_reason).toBe('tool_use');
  });

  it('ends with an error event on a provider\'s error chunk, and on a delta for a call whose block closed', () => {
    const failed = run([chunk({ content: 'a' }), JSON.stringify({ error: { message: 'overloaded' } }), chunk({ content: 'b' }), '[DONE]']);
    expect(failed.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error']);
    expect(failed.at(-1)?.data).toEqual({ type: 'error', error: { type: 'api_error', message: 'the provider reported an error in its stream: overloaded' } });
    const interleaved = run([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'A', arguments: '{' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'B', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }),
    ]);
    expect(interleaved.at(-1)?.event).toBe('error');
    expect(interleaved.at(-1)?.data.error.message).toContain('went back to a tool call');
  });

  it('ends an empty stream as a whole message, and a length finish as max_tokens', () => {
    expect(run([]).map((e) => e.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
    const cut = run([chunk({ content: 'partial' }, 'length'), '[DONE]', chunk({ content: 'ignored' })]);
    expect(cut.at(-2)?.data.delta.stop_reason).toBe('max_tokens');
    expect(cut.filter((e) => e.event === 'message_stop')).toHaveLength(1);
  });
});

describe('the gateway\'s refusals', () => {
  it('are Anthropic\'s error shape with our code beside the type', () => {
    const typeOf = (code: Parameters<typeof anthropicError>[0]) => {
      const reply = anthropicError(code, 'why');
      return [reply.status, JSON.parse(String(reply.body)).error.type];
    };
    expect(JSON.parse(String(anthropicError('forbidden_model', 'key k may not').body))).toEqual({ type: 'error', error: { type: 'permission_error', message: 'key k may not', code: 'forbidden_model' } });
    expect([typeOf('unauthorized'), typeOf('model_not_found'), typeOf('too_large'), typeOf('rate_limited'), typeOf('busy'), typeOf('gateway_config'), typeOf('invalid_input')]).toEqual([
      [401, 'authentication_error'],
      [404, 'not_found_error'],
      [413, 'request_too_large'],
      [429, 'rate_limit_error'],
      [503, 'overloaded_error'],
      [503, 'api_error'],
      [400, 'invalid_request_error'],
    ]);
  });
});
