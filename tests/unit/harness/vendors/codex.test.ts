/**
 * The codex adapter:
 * - argv of a first turn and a resumed one: exec options (-C, --sandbox, profile args) before
 *   `resume`, the prompt after `--` (so `resume` or a dash-led prompt stays a prompt), stdin closed;
 *   a prompt too long for one argument goes on stdin as `-`;
 * - model, effort (a config override) and mode (the sandbox) on their flags;
 * - a turn's events as codex prints them: thread id, the last agent_message as the answer, command
 *   and file items summarized, `error` items taken as the warnings they are;
 * - turn.failed and a non-retry `error` win; retry notices count only when the turn never ends.
 */
import { describe, expect, it } from 'vitest';
import { adapterFor } from '../../../../src/harness/vendors/index.js';
import { ARG_PROMPT_LIMIT } from '../../../../src/harness/vendors/events.js';

const codex = adapterFor('codex');
const shape = { prompt: 'resume', cwd: '/repo/sub', args: [] as string[] };
const THREAD = '01a22d9b-fb5b-7de1-994f-1d750abd150b';

function feed(lines: unknown[]) {
  const parser = codex.turnParser();
  const entries = lines.map((line) => parser.line(typeof line === 'string' ? line : JSON.stringify(line)));
  return { parser, entries };
}

describe('codex invocation', () => {
  it('runs exec --json in the cwd with the prompt as the argument after --, stdin closed', () => {
    const invocation = codex.invocation(shape, null);
    expect(invocation).toEqual({ args: ['exec', '--json', '-C', '/repo/sub', '--skip-git-repo-check', '--', 'resume'], stdin: null, hidden: [6] });
    expect(codex.defaultCommand).toBe('codex');
  });

  it('puts exec options and profile args before resume, then the thread id and the prompt', () => {
    const invocation = codex.invocation({ ...shape, prompt: '-x do it', model: 'gpt-5', effort: 'high', mode: 'workspace-write', args: ['--add-dir', '/tmp/extra'] }, THREAD);
    expect(invocation.args).toEqual([
      'exec', '--json',
      '--model', 'gpt-5', '--config', 'model_reasoning_effort="high"', '--sandbox', 'workspace-write',
      '-C', '/repo/sub', '--skip-git-repo-check', '--add-dir', '/tmp/extra',
      'resume', '--', THREAD, '-x do it',
    ]);
    expect(invocation.stdin).toBeNull();
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([THREAD, '-x do it']);
  });

  it('sends a prompt too long for one argument on stdin, as codex reads `-`', () => {
    const prompt = 'é'.repeat(ARG_PROMPT_LIMIT / 2 + 1);
    const invocation = codex.invocation({ ...shape, prompt }, THREAD);
    expect(invocation.args.slice(-4)).toEqual(['resume', '--', THREAD, '-']);
    expect(invocation.stdin).toBe(prompt);
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([THREAD]);
    expect(codex.invocation({ ...shape, prompt: 'x'.repeat(ARG_PROMPT_LIMIT) }, null).stdin).toBeNull();
  });

  it('names -c / --config as secret-bearing (an override may set a provider token)', () => {
    expect(codex.secretFlags).toEqual(['-c', '--config']);
  });
});

describe('codex events', () => {
  it('reads a whole turn: thread id, a warning item, a command, the answer, turn.completed', () => {
    // The first three and the last two lines are what codex-cli 0.169.0 printed against a scripted model API.
    const { parser, entries } = feed([
      { type: 'thread.started', thread_id: THREAD },
      { type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Model metadata for `m1` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.' } },
      { type: 'turn.started' },
      { type: 'item.started', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: '', exit_code: null, status: 'in_progress' } },
      { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: 'a.txt\n', exit_code: 0, status: 'completed' } },
      { type: 'item.completed', item: { id: 'item_2', type: 'file_change', changes: [{ path: 'a.txt', kind: 'update' }], status: 'completed' } },
      { type: 'item.completed', item: { id: 'item_3', type: 'reasoning', text: 'thinking' } },
      { type: 'item.completed', item: { id: 'item_4', type: 'agent_message', text: 'pong 1' } },
      { type: 'turn.completed', usage: { input_tokens: 5, cached_input_tokens: 0, output_tokens: 2, reasoning_output_tokens: 0 } },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'thread started'],
      ['system', 'warning: Model metadata for `m1` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.'],
      ['system', 'turn started'],
      ['tool_use', '$ bash -lc ls'],
      ['tool_result', 'exit 0: a.txt'],
      ['tool_result', 'completed: a.txt'],
      ['other', 'thinking'],
      ['assistant', 'pong 1'],
      ['result', 'turn completed'],
    ]);
    expect(parser.vendorId).toBe(THREAD);
    expect(parser.answer).toBe('pong 1');
    expect(parser.ended).toBe(true);
    expect(parser.error).toBeNull();
  });

  it('ends with turn.failed\'s message after codex gave up retrying', () => {
    // As codex printed when the model API answered 500 to every attempt.
    const { parser, entries } = feed([
      { type: 'thread.started', thread_id: THREAD },
      { type: 'turn.started' },
      ...[1, 2, 3, 4, 5].map((n) => ({ type: 'error', message: `Reconnecting... ${n}/5 (We’re currently experiencing high demand, which may cause temporary errors.)` })),
      { type: 'error', message: 'We’re currently experiencing high demand, which may cause temporary errors.' },
      { type: 'turn.failed', error: { message: 'We’re currently experiencing high demand, which may cause temporary errors.' } },
    ]);
    expect(entries.at(-1)?.kind).toBe('error');
    expect(parser.error).toBe('We’re currently experiencing high demand, which may cause temporary errors.');
    expect(parser.ended).toBe(true);
  });

  it('does not count a retry notice against a turn that then completed', () => {
    const { parser } = feed([
      { type: 'thread.started', thread_id: THREAD },
      { type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion)' },
      { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'done' } },
      { type: 'turn.completed', usage: {} },
    ]);
    expect(parser.error).toBeNull();
    expect(parser.answer).toBe('done');
  });

  it('reports the last retry notice when the turn never ended', () => {
    const { parser } = feed([{ type: 'thread.started', thread_id: THREAD }, { type: 'error', message: 'Reconnecting... 2/5 (connection refused)' }]);
    expect(parser.ended).toBe(false);
    expect(parser.error).toBe('Reconnecting... 2/5 (connection refused)');
  });

  it('lets an error event other than a retry notice win over turn.completed', () => {
    const { parser } = feed([{ type: 'error', message: 'context window exceeded' }, { type: 'turn.completed', usage: {} }]);
    expect(parser.error).toBe('context window exceeded');
    expect(parser.ended).toBe(true);
  });

  it('summarizes MCP and web search items, and keeps a turn.failed without a message honest', () => {
    const { parser, entries } = feed([
      { type: 'item.started', item: { id: 'i', type: 'mcp_tool_call', server: 'majordomus', tool: 'search', arguments: { q: 'x' }, status: 'in_progress' } },
      { type: 'item.completed', item: { id: 'i', type: 'mcp_tool_call', server: 'majordomus', tool: 'search', status: 'completed' } },
      { type: 'item.started', item: { id: 'w', type: 'web_search', query: 'vitest' } },
      { type: 'item.completed', item: { id: 't', type: 'todo_list', items: [] } },
      { type: 'turn.failed' },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['tool_use', 'majordomus.search {"q":"x"}'],
      ['tool_result', 'majordomus.search: completed'],
      ['tool_use', 'web search vitest'],
      ['other', undefined],
      ['error', 'turn failed'],
    ]);
    expect(parser.error).toBe('turn failed');
  });
});
