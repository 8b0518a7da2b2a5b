/**
 * The executor adapter (majordomus's own agent, whose events it defines):
 * - run by this Node with the package's built main.js, `exec --json`, the task on stdin, resume,
 *   model and mode flags, profile args last; effort refused;
 * - a turn's events: session id, messages, tool calls and results, and the terminal `result`
 *   whose status is honest: completed and waiting are answers (waiting answers its question),
 *   max_turns, loop, error and cancelled are errors.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../../src/platform/package-root.js';
import { adapterFor } from '../../../../src/harness/vendors/index.js';

const executor = adapterFor('executor');
const shape = { prompt: 'rename foo to bar', cwd: '/repo', args: [] as string[] };
const SESSION = '2b4a3c1e-5f6a-4b7c-8d9e-0f1a2b3c4d5e';

function feed(lines: unknown[]) {
  const parser = executor.turnParser();
  const entries = lines.map((line) => parser.line(typeof line === 'string' ? line : JSON.stringify(line)));
  return { parser, entries };
}

describe('executor invocation', () => {
  it('runs the package\'s own main.js with this Node, `exec --json`, the task on stdin', () => {
    expect(executor.defaultCommand).toBe(process.execPath);
    expect(executor.defaultCommandArgs).toEqual([join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js')]);
    expect(existsSync(join(PACKAGE_ROOT, 'package.json'))).toBe(true);
    expect(executor.invocation(shape, null)).toEqual({ args: ['exec', '--json'], stdin: 'rename foo to bar', hidden: [] });
  });

  it('resumes by id and maps model and mode, profile args last', () => {
    const invocation = executor.invocation({ ...shape, model: 'qwen3-coder', mode: 'edit', args: ['--max-turns', '20'] }, SESSION);
    expect(invocation.args).toEqual(['exec', '--json', '--resume', SESSION, '--model', 'qwen3-coder', '--mode', 'edit', '--max-turns', '20']);
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([SESSION]);
  });

  it('refuses an effort with the fix', () => {
    expect(() => executor.invocation({ ...shape, effort: 'low' }, null)).toThrow('executor cannot take an effort (its CLI has no flag for it): remove effort from the profile or with_config');
  });
});

describe('executor events', () => {
  it('reads a completed turn: session id, tool call and result, the answer', () => {
    const { parser, entries } = feed([
      { type: 'session', id: SESSION },
      { type: 'message', role: 'user', text: 'rename foo to bar' },
      { type: 'tool_call', name: 'grep', input: { pattern: 'foo' } },
      { type: 'tool_result', name: 'grep', ok: true, output: 'src/a.ts:1: foo' },
      { type: 'tool_result', name: 'edit_file', ok: false, output: 'old_string not unique' },
      { type: 'message', role: 'assistant', text: 'Renamed in src/a.ts.' },
      { type: 'result', status: 'completed', answer: 'Renamed foo to bar in src/a.ts.', usage: { prompt_tokens: 120, completion_tokens: 30 } },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'session started'],
      ['user', 'rename foo to bar'],
      ['tool_use', 'grep {"pattern":"foo"}'],
      ['tool_result', 'grep: src/a.ts:1: foo'],
      ['tool_result', 'edit_file failed: old_string not unique'],
      ['assistant', 'Renamed in src/a.ts.'],
      ['result', 'Renamed foo to bar in src/a.ts.'],
    ]);
    expect(parser.vendorId).toBe(SESSION);
    expect(parser.answer).toBe('Renamed foo to bar in src/a.ts.');
    expect(parser.ended).toBe(true);
    expect(parser.error).toBeNull();
  });

  it('answers a waiting turn with its question, not as an error', () => {
    const { parser, entries } = feed([{ type: 'session', id: SESSION }, { type: 'result', status: 'waiting', question: 'Which bar, src or lib?', options: ['src', 'lib'] }]);
    expect(entries[1]).toMatchObject({ kind: 'result', text: 'waiting: Which bar, src or lib?' });
    expect(parser.answer).toBe('Which bar, src or lib?');
    expect(parser.error).toBeNull();
  });

  it.each(['max_turns', 'loop', 'cancelled'])('calls a %s ending an error, keeping the last message as the answer', (status) => {
    const { parser, entries } = feed([{ type: 'message', role: 'assistant', text: 'Still on it.' }, { type: 'result', status }]);
    expect(entries[1]).toMatchObject({ kind: 'error', text: `the executor stopped: ${status}` });
    expect(parser.error).toBe(`the executor stopped: ${status}`);
    expect(parser.answer).toBe('Still on it.');
    expect(parser.ended).toBe(true);
  });

  it('takes an error ending\'s reason', () => {
    const { parser } = feed([{ type: 'result', status: 'error', error: 'model unreachable after failover: 503 from every provider' }, { type: 'novel' }]);
    expect(parser.error).toBe('model unreachable after failover: 503 from every provider');
  });
});
