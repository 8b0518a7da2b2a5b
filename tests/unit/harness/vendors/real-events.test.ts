/**
 * The parsers on what the real CLIs printed (tests/fixtures/harness/vendor-events/, captured from
 * claude, codex and gemini driven through whole turns against a scripted model API): each turn's
 * session id, answer and end, a resumed turn carrying the first turn's id, a tool turn's tool use
 * and result, an error turn's error, and every line a transcript entry of a known kind.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AgentName } from '../../../../src/harness/types.js';
import { adapterFor } from '../../../../src/harness/vendors/index.js';

function run(agent: AgentName, name: string) {
  const text = readFileSync(new URL(`../../../fixtures/harness/vendor-events/${name}.jsonl`, import.meta.url), 'utf8');
  const parser = adapterFor(agent).turnParser();
  const entries = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parser.line(line));
  return { parser, entries, kinds: entries.map((e) => e.kind) };
}

const FIRST = 'Hello from the first turn of the scripted model.';
const SECOND = 'Hello again: this second turn remembers the first.';
const TOOL = 'The secret word is marmalade.';

describe.each(['claude', 'codex', 'gemini'] as const)('%s as captured', (agent) => {
  it('reads a first and a resumed turn: one session id, each turn\'s answer, each turn ended', () => {
    const first = run(agent, `${agent}-turn1`);
    const second = run(agent, `${agent}-turn2`);
    expect(first.parser.vendorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.parser.vendorId).toBe(first.parser.vendorId);
    expect([first.parser.answer, second.parser.answer]).toEqual([FIRST, SECOND]);
    expect([first.parser.ended, second.parser.ended]).toEqual([true, true]);
    expect([first.parser.error, second.parser.error]).toEqual([null, null]);
    expect([...first.kinds, ...second.kinds]).not.toContain('text');
    expect([...first.kinds, ...second.kinds]).not.toContain('other');
  });

  it('reads a tool turn: the tool use, its result, then the answer', () => {
    const { parser, kinds } = run(agent, `${agent}-tool-turn`);
    expect(kinds.indexOf('tool_use')).toBeGreaterThan(-1);
    expect(kinds.indexOf('tool_result')).toBeGreaterThan(kinds.indexOf('tool_use'));
    expect(kinds.lastIndexOf('assistant')).toBeGreaterThan(kinds.indexOf('tool_result'));
    expect(parser.answer).toBe(TOOL);
    expect(parser.ended).toBe(true);
    expect(parser.error).toBeNull();
  });
});

describe('error turns as captured (the model API refused the request)', () => {
  it.each([
    ['claude', 'API Error: 400 the scripted model API refuses this request'],
    ['codex', '{"error":{"message":"the scripted model API refuses this request","type":"invalid_request_error","param":null,"code":null}}'],
    ['gemini', '[API Error: {"error":{"code":400,"message":"the scripted model API refuses this request","status":"INVALID_ARGUMENT"}}]'],
  ] as const)('%s: the turn ended with the error the CLI reported', (agent, message) => {
    const { parser, kinds } = run(agent, `${agent}-error-turn`);
    expect(parser.error).toBe(message);
    expect(parser.ended).toBe(true);
    expect(parser.vendorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(kinds.at(-1)).toBe('error');
  });
});

describe('entries of the captured turns', () => {
  it('summarize each tool call as its name and input', () => {
    expect(run('claude', 'claude-tool-turn').entries.find((e) => e.kind === 'tool_use')?.text).toMatch(/^Read \{"file_path":".*\/notes\.txt"\}$/);
    expect(run('codex', 'codex-tool-turn').entries.find((e) => e.kind === 'tool_use')?.text).toBe("$ /bin/bash -lc 'cat notes.txt'");
    expect(run('gemini', 'gemini-tool-turn').entries.find((e) => e.kind === 'tool_use')?.text).toMatch(/^read_file \{"file_path":".*\/notes\.txt"\}$/);
  });
});
