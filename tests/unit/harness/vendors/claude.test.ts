/**
 * The claude adapter:
 * - argv of a first turn, a resumed one, with model, effort and permission mode, profile args last;
 *   the prompt on stdin (never after a variadic flag), the resume id hidden from sessionInfo;
 * - an effort claude would silently ignore is refused with the fix;
 * - a turn's events as claude prints them: session id from init, the answer from `result`, tool
 *   calls and results summarized, a subagent's text never taken for the answer;
 * - an error ending (is_error with a result text, or an error subtype with `errors`) wins.
 */
import { describe, expect, it } from 'vitest';
import { HarnessRefusal } from '../../../../src/harness/types.js';
import { adapterFor } from '../../../../src/harness/vendors/index.js';

const claude = adapterFor('claude');
const shape = { prompt: '- fix the test', cwd: '/repo', args: [] as string[] };
const SESSION = '16fa66cd-cdba-4517-b5fc-ddc4d0304a50';

function feed(lines: unknown[]) {
  const parser = claude.turnParser();
  const entries = lines.map((line) => parser.line(typeof line === 'string' ? line : JSON.stringify(line)));
  return { parser, entries };
}

describe('claude invocation', () => {
  it('prints stream-json in print mode with the prompt on stdin', () => {
    expect(claude.invocation(shape, null)).toEqual({ args: ['-p', '--output-format', 'stream-json', '--verbose'], stdin: '- fix the test', hidden: [] });
    expect(claude.defaultCommand).toBe('claude');
  });

  it('resumes by session id, maps model, effort and mode to their flags, and appends profile args last', () => {
    const invocation = claude.invocation({ ...shape, model: 'sonnet', effort: 'high', mode: 'plan', args: ['--allowedTools', 'Bash', 'Edit'] }, SESSION);
    expect(invocation.args).toEqual([
      '-p', '--output-format', 'stream-json', '--verbose',
      '--resume', SESSION,
      '--model', 'sonnet', '--effort', 'high', '--permission-mode', 'plan',
      '--allowedTools', 'Bash', 'Edit',
    ]);
    // A variadic flag last cannot swallow the prompt: it is not in argv.
    expect(invocation.stdin).toBe('- fix the test');
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([SESSION]);
  });

  it('refuses an effort claude does not know, naming the values and the fix', () => {
    expect(() => claude.invocation({ ...shape, effort: 'turbo' }, null)).toThrow(HarnessRefusal);
    expect(() => claude.invocation({ ...shape, effort: 'turbo' }, null)).toThrow('claude takes effort low, medium, high, xhigh, max, not "turbo": fix effort in the profile or with_config');
  });

  it('names the flags whose inline JSON may carry secrets', () => {
    expect(claude.secretFlags).toEqual(['--settings', '--mcp-config']);
  });
});

describe('claude events', () => {
  it('reads a whole turn: session id from init, tool use and result, the answer from result', () => {
    const { parser, entries } = feed([
      { type: 'system', subtype: 'init', cwd: '/repo', session_id: SESSION, tools: ['Bash', 'Read'], model: 'claude-sonnet-4-5', permissionMode: 'default', apiKeySource: 'ANTHROPIC_API_KEY' },
      { type: 'assistant', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }] }, parent_tool_use_id: null, session_id: SESSION },
      { type: 'user', message: { role: 'user', content: [{ tool_use_id: 'toolu_1', type: 'tool_result', content: 'a.txt\nb.txt', is_error: false }] }, parent_tool_use_id: null, session_id: SESSION },
      { type: 'assistant', message: { id: 'msg_2', role: 'assistant', content: [{ type: 'text', text: 'Two files: a.txt and b.txt.' }] }, parent_tool_use_id: null, session_id: SESSION },
      { type: 'result', subtype: 'success', is_error: false, duration_ms: 1200, num_turns: 2, result: 'Two files: a.txt and b.txt.', session_id: SESSION, total_cost_usd: 0.01, usage: { input_tokens: 10, output_tokens: 8 } },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'session started (model claude-sonnet-4-5)'],
      ['tool_use', 'Bash {"command":"ls"}'],
      ['tool_result', 'a.txt\nb.txt'],
      ['assistant', 'Two files: a.txt and b.txt.'],
      ['result', 'Two files: a.txt and b.txt.'],
    ]);
    expect(entries[0]?.event).toMatchObject({ type: 'system', session_id: SESSION });
    expect(parser.vendorId).toBe(SESSION);
    expect(parser.ended).toBe(true);
    expect(parser.answer).toBe('Two files: a.txt and b.txt.');
    expect(parser.error).toBeNull();
  });

  it('takes the last assistant text as the answer until result, but never a subagent\'s', () => {
    const { parser } = feed([
      { type: 'system', subtype: 'init', session_id: SESSION },
      { type: 'assistant', message: { content: [{ type: 'text', text: 'Working on it.' }] }, parent_tool_use_id: null, session_id: SESSION },
      { type: 'assistant', message: { content: [{ type: 'text', text: 'subagent notes' }] }, parent_tool_use_id: 'toolu_9', session_id: SESSION },
    ]);
    expect(parser.answer).toBe('Working on it.');
    expect(parser.ended).toBe(false);
  });

  it('ends with the error of an is_error result (as claude prints when it is not logged in)', () => {
    // Printed by the real CLI with a throwaway HOME and no key (fields trimmed).
    const { parser, entries } = feed([
      { type: 'system', subtype: 'init', cwd: '/tmp/h', session_id: SESSION, model: 'claude-opus-5-5', permissionMode: 'default', apiKeySource: 'none' },
      { type: 'assistant', message: { model: '<synthetic>', role: 'assistant', content: [{ type: 'text', text: 'Not logged in · Please run /login' }] }, parent_tool_use_id: null, session_id: SESSION, error: 'authentication_failed', is_api_error_message: true },
      { type: 'result', subtype: 'success', is_error: true, num_turns: 1, result: 'Not logged in · Please run /login', session_id: SESSION, terminal_reason: 'api_error' },
    ]);
    expect(entries.at(-1)).toMatchObject({ kind: 'error', text: 'Not logged in · Please run /login' });
    expect(parser.error).toBe('Not logged in · Please run /login');
    expect(parser.ended).toBe(true);
  });

  it('ends with the errors of an error subtype (as claude prints for an unknown resume id)', () => {
    // Printed by the real CLI for `--resume` of an id it never saw: no init, only this result.
    const { parser } = feed([
      { type: 'result', subtype: 'error_during_execution', duration_ms: 0, is_error: true, num_turns: 0, session_id: '7b0f4a8e-0000-4000-8000-000000000000', errors: ['No conversation found with session ID: 7b0f4a8e-0000-4000-8000-000000000000'] },
    ]);
    expect(parser.error).toBe('No conversation found with session ID: 7b0f4a8e-0000-4000-8000-000000000000');
    expect(parser.answer).toBeNull();
  });

  it('names the subtype when an error result carries no message, and an error stays after later lines', () => {
    const { parser } = feed([{ type: 'result', subtype: 'error_max_turns', is_error: true, session_id: SESSION }, { type: 'result', subtype: 'success', is_error: false, result: 'late', session_id: SESSION }]);
    expect(parser.error).toBe('claude ended the turn with error_max_turns');
  });

  it('keeps lines that are not JSON objects as text, and unknown events as other', () => {
    const { entries } = feed(['Warning: Unknown --effort value', '42', { type: 'stream_event', event: { type: 'message_start' } }, { type: 'user', message: { content: [{ type: 'text', text: 'hi' }] } }]);
    expect(entries).toEqual([
      { kind: 'text', text: 'Warning: Unknown --effort value', event: 'Warning: Unknown --effort value' },
      { kind: 'text', text: '42', event: '42' },
      { kind: 'other', event: { type: 'stream_event', event: { type: 'message_start' } } },
      { kind: 'user', text: 'hi', event: { type: 'user', message: { content: [{ type: 'text', text: 'hi' }] } } },
    ]);
  });
});
