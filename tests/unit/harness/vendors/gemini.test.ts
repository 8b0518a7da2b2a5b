/**
 * The gemini adapter:
 * - argv of a first turn and a resumed one, the prompt as one `--prompt=` argument (a dash-led
 *   prompt after `-p` is read as flags by the CLI), profile args before it; stdin closed; the
 *   checkout trusted for the run (headless gemini exits 55 in an untrusted folder);
 * - effort refused (the CLI has no flag for it), and a prompt too long for one argument refused;
 * - a turn's events: session id from init, the answer from assistant pieces since the last tool
 *   call (the CLI's own rule), a result with status error, error events by severity.
 */
import { describe, expect, it } from 'vitest';
import { HarnessRefusal } from '../../../../src/harness/types.js';
import { ARG_PROMPT_LIMIT } from '../../../../src/harness/vendors/events.js';
import { adapterFor } from '../../../../src/harness/vendors/index.js';

const gemini = adapterFor('gemini');
const shape = { prompt: '- list the files', cwd: '/repo', args: [] as string[] };
const SESSION = '6bfeb47e-1468-4fba-b73b-39b3383f94d0';
const at = '2026-11-30T18:09:19.111Z';

function feed(lines: unknown[]) {
  const parser = gemini.turnParser();
  const entries = lines.map((line) => parser.line(typeof line === 'string' ? line : JSON.stringify(line)));
  return { parser, entries };
}

describe('gemini invocation', () => {
  it('prints stream-json, trusts the checkout for this run, and takes the prompt in one --prompt= argument', () => {
    expect(gemini.invocation(shape, null)).toEqual({ args: ['--output-format', 'stream-json', '--skip-trust', '--prompt=- list the files'], stdin: null, hidden: [3] });
    expect(gemini.defaultCommand).toBe('gemini');
  });

  it('resumes by session id, maps model and mode, and puts profile args before the prompt', () => {
    const invocation = gemini.invocation({ ...shape, model: 'gemini-2.5-flash', mode: 'auto_edit', args: ['--include-directories', 'docs'] }, SESSION);
    expect(invocation.args).toEqual([
      '--output-format', 'stream-json', '--skip-trust', '--model', 'gemini-2.5-flash', '--resume', SESSION, '--approval-mode', 'auto_edit',
      '--include-directories', 'docs', '--prompt=- list the files',
    ]);
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([SESSION, '--prompt=- list the files']);
  });

  it('refuses an effort, naming the agent, the setting and the fix', () => {
    expect(() => gemini.invocation({ ...shape, effort: 'high' }, null)).toThrow(HarnessRefusal);
    expect(() => gemini.invocation({ ...shape, effort: 'high' }, null)).toThrow('gemini cannot take an effort (its CLI has no flag for it): remove effort from the profile or with_config');
  });

  it('refuses a prompt longer than one argument may be', () => {
    const prompt = 'x'.repeat(ARG_PROMPT_LIMIT + 1);
    expect(() => gemini.invocation({ ...shape, prompt }, null)).toThrow(`gemini takes its prompt as one argument, at most ${ARG_PROMPT_LIMIT} bytes; this one has ${ARG_PROMPT_LIMIT + 1}: shorten it, or use a profile of another agent`);
    expect(gemini.invocation({ ...shape, prompt: prompt.slice(1) }, null).args.at(-1)).toBe(`--prompt=${prompt.slice(1)}`);
  });
});

describe('gemini events', () => {
  it('reads a whole turn: the answer is what the assistant said after its last tool call', () => {
    const { parser, entries } = feed([
      { type: 'init', timestamp: at, session_id: SESSION, model: 'gemini-2.5-flash' },
      { type: 'message', timestamp: at, role: 'user', content: '- list the files' },
      { type: 'message', timestamp: at, role: 'assistant', content: 'Let me look.', delta: true },
      { type: 'tool_use', timestamp: at, tool_name: 'list_directory', tool_id: 't1', parameters: { dir_path: '.' } },
      { type: 'tool_result', timestamp: at, tool_id: 't1', status: 'success', output: 'Listed 2 item(s).' },
      { type: 'error', timestamp: at, severity: 'warning', message: 'Loop detected, stopping execution' },
      { type: 'message', timestamp: at, role: 'assistant', content: 'Two files: ', delta: true },
      { type: 'message', timestamp: at, role: 'assistant', content: 'a.txt and b.txt.', delta: true },
      { type: 'result', timestamp: at, status: 'success', stats: { total_tokens: 42, input_tokens: 30, output_tokens: 12, duration_ms: 900, tool_calls: 1 } },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'session started (model gemini-2.5-flash)'],
      ['user', '- list the files'],
      ['assistant', 'Let me look.'],
      ['tool_use', 'list_directory {"dir_path":"."}'],
      ['tool_result', 'Listed 2 item(s).'],
      ['error', 'Loop detected, stopping execution'],
      ['assistant', 'Two files:'],
      ['assistant', 'a.txt and b.txt.'],
      ['result', 'success'],
    ]);
    expect(parser.vendorId).toBe(SESSION);
    expect(parser.answer).toBe('Two files: a.txt and b.txt.');
    expect(parser.ended).toBe(true);
    expect(parser.error).toBeNull();
  });

  it('keeps the text before the last tool call when nothing followed it', () => {
    const { parser } = feed([
      { type: 'message', role: 'assistant', content: 'Here is the plan.', delta: true },
      { type: 'tool_use', tool_name: 'write_file', tool_id: 't2', parameters: {} },
      { type: 'tool_result', tool_id: 't2', status: 'error', error: { type: 'TOOL_EXECUTION_ERROR', message: 'denied' } },
    ]);
    expect(parser.answer).toBe('Here is the plan.');
  });

  it('ends with the message of a result with status error', () => {
    const { parser, entries } = feed([{ type: 'init', session_id: SESSION }, { type: 'result', timestamp: at, status: 'error', error: { type: 'FatalTurnLimitedError', message: 'Reached max session turns' }, stats: {} }]);
    expect(entries[1]).toMatchObject({ kind: 'error', text: 'Reached max session turns' });
    expect(parser.error).toBe('Reached max session turns');
    expect(parser.ended).toBe(true);
  });

  it('lets an error-severity event win over a success result', () => {
    const { parser } = feed([
      { type: 'error', timestamp: at, severity: 'error', message: 'Maximum session turns exceeded' },
      { type: 'result', timestamp: at, status: 'success', stats: {} },
    ]);
    expect(parser.error).toBe('Maximum session turns exceeded');
  });

  it('names a failed result that carries no message', () => {
    const { parser, entries } = feed([{ type: 'result', status: 'error' }, { type: 'surprise' }]);
    expect(parser.error).toBe('gemini ended the turn with an error');
    expect(entries[1]).toEqual({ kind: 'other', event: { type: 'surprise' } });
  });
});
