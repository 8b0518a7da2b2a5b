/**
 * A Messages request read into a chat-completions body:
 * - the system prompt as a string or blocks, without Claude Code's billing line; conversation
 *   `system` messages before the first answer join it, later ones stay in place;
 * - a user message's tool results become `tool` messages ahead of its other content (an error
 *   result says so), its images image parts, an image inside a tool result a note;
 * - an assistant message's text and tool_use blocks become content and tool_calls, thinking left out;
 * - tools with an input_schema become functions (Anthropic's server tools are left out),
 *   tool_choice and disable_parallel_tool_use map over, stop_sequences become stop;
 * - a malformed request is refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import { readMessagesBody } from '../../../src/gateway/anthropic-request.js';

function chatOf(value: unknown): Record<string, unknown> {
  const read = readMessagesBody(value);
  if (!read.ok) throw new Error(read.message);
  return read.chat.body as Record<string, unknown>;
}

describe('reading a Messages request', () => {
  it('carries the system prompt (string or blocks, without the billing line) and merges early system messages into it', () => {
    expect(chatOf({ model: 'm', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    const body = chatOf({
      model: 'claude-x',
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=1;' },
        { type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>r</system-reminder>' }, { type: 'text', text: 'do it' }] },
        { role: 'system', content: [{ type: 'text', text: '# Environment' }] },
        { role: 'assistant', content: 'ok' },
        { role: 'system', content: 'later note' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are an agent.\n\n# Environment' },
      { role: 'user', content: '<system-reminder>r</system-reminder>\ndo it' },
      { role: 'assistant', content: 'ok' },
      { role: 'system', content: 'later note' },
    ]);
  });

  it('turns tool results into tool messages right after the call, ahead of the user text', () => {
    const body = chatOf({
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
            { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'ls' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'both done' },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'file text' },
            { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: [{ type: 'text', text: 'denied' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }] },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'file text' },
      { role: 'tool', tool_call_id: 'toolu_2', content: expect.stringMatching(/^Error: denied\n\[an image was here/) },
      { role: 'user', content: 'both done' },
    ]);
  });

  it('passes a user image as an image part, by data URL or URL', () => {
    const body = chatOf({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
    ]);
  });

  it('maps tools, tool_choice and the sampling fields, and leaves out what has no counterpart', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    const body = chatOf({
      model: 'm',
      max_tokens: 2048,
      stream: true,
      stop_sequences: ['END'],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 5,
      thinking: { type: 'adaptive' },
      metadata: { user_id: 'u' },
      output_config: { effort: 'medium' },
      tools: [
        { name: 'Search', description: 'find', input_schema: schema, defer_loading: true },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
      ],
      tool_choice: { type: 'tool', name: 'Search', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'q' }],
    });
    expect(body).toEqual({
      messages: [{ role: 'user', content: 'q' }],
      max_tokens: 2048,
      stop: ['END'],
      temperature: 0.3,
      top_p: 0.9,
      tools: [{ type: 'function', function: { name: 'Search', description: 'find', parameters: schema } }],
      tool_choice: { type: 'function', function: { name: 'Search' } },
      parallel_tool_calls: false,
      stream: true,
    });
    const choice = (type: string): unknown => chatOf({ model: 'm', tools: [{ name: 'T', input_schema: {} }], tool_choice: { type }, messages: [] }).tool_choice;
    expect([choice('auto'), choice('any'), choice('none')]).toEqual(['auto', 'required', 'none']);
  });

  it('answers the model asked for and whether it streams', () => {
    expect(readMessagesBody({ model: 'claude-sonnet-4-5', stream: true, messages: [] })).toMatchObject({ ok: true, chat: { model: 'claude-sonnet-4-5', stream: true } });
  });

  it('refuses a malformed request naming the field', () => {
    expect(readMessagesBody([])).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(readMessagesBody({ messages: [] })).toMatchObject({ ok: false, code: 'invalid_input', message: expect.stringContaining('model') });
    expect(readMessagesBody({ model: 'm' })).toMatchObject({ ok: false, code: 'invalid_input', message: expect.stringContaining('messages') });
    expect(readMessagesBody({ model: 'm', messages: [{ role: 'tool', content: 'x' }] })).toMatchObject({ ok: false, message: 'messages[0].role must be user or assistant, not "tool"' });
    expect(readMessagesBody({ model: 'm', messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] })).toMatchObject({ ok: false, message: 'messages[0].content[0].tool_use_id must be a string' });
    expect(readMessagesBody({ model: 'm', messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x' }] }] })).toMatchObject({ ok: false, message: expect.stringContaining('messages[0].content[0]') });
  });
});
