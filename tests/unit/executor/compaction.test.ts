/**
 * Compaction and the invariant it must keep: a strict server refuses a `tool` message without the
 * assistant message whose `tool_calls` holds its id, and an assistant message whose calls are not
 * all answered. Covers:
 * - the validity check itself, on valid and on every kind of broken conversation (table);
 * - blocks: a user message, or an assistant message with all its tool results;
 * - the estimate: chars/3 alone, or the last report plus what was added or removed since;
 * - nothing happens under the limit; old tool results are snipped oldest first, the last blocks
 *   stay whole, and snipping stops once under the target; small and snipped results are left;
 * - when snipping is not enough, the oldest part is summarised into one user message (joined to a
 *   following user message), the summariser sees exactly that part;
 * - a randomized property test (fixed seed): whatever the conversation and limits, the result is
 *   valid, starts with the system prompt and ends with the kept blocks unchanged.
 */
import { describe, expect, it } from 'vitest';
import { blocksOf, cap, compact, conversationProblem, estimateTokens, renderForSummary, SUMMARY_HEADING, type CompactionOptions } from '../../../src/executor/compaction.js';
import type { AssistantMessage, ChatMessage } from '../../../src/executor/messages.js';
import { seeded } from '../../helpers/seeded.js';

const system: ChatMessage = { role: 'system', content: 'sys' };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const text = (content: string): ChatMessage => ({ role: 'assistant', content });
const calls = (...ids: string[]): AssistantMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"${id}"}` } })),
});
const result = (id: string, content = 'r'): ChatMessage => ({ role: 'tool', tool_call_id: id, content });

function options(overrides: Partial<CompactionOptions> = {}): CompactionOptions {
  return { limitTokens: 100, targetTokens: 60, baseline: null, keepBlocks: 2, summarise: async () => 'SUMMARY', ...overrides };
}

describe('conversationProblem', () => {
  const cases: [string, ChatMessage[], string | null][] = [
    ['an empty conversation', [], null],
    ['system, user, answer', [system, user('t'), text('a')], null],
    ['a call and its result', [system, user('t'), calls('a'), result('a'), text('done')], null],
    ['two calls answered in another order', [system, user('t'), calls('a', 'b'), result('b'), result('a')], null],
    ['a result with no call before it', [system, user('t'), result('a')], 'message 2: a tool result with no assistant tool call before it'],
    ['a result after a user message', [system, user('t'), calls('a'), result('a'), user('u'), result('a')], 'message 5: a tool result with no assistant tool call before it'],
    ['a result for an id not called', [system, user('t'), calls('a'), result('z')], 'message 3: a tool result for z, which message 2 did not call (or was answered already)'],
    ['a call answered twice', [system, user('t'), calls('a'), result('a'), result('a')], 'message 4: a tool result for a, which message 2 did not call (or was answered already)'],
    ['a call left unanswered before a user message', [system, user('t'), calls('a', 'b'), result('a'), user('u')], 'message 2: calls b left unanswered'],
    ['a call left unanswered at the end', [system, user('t'), calls('a')], 'message 2: calls a left unanswered'],
    ['two calls sharing an id', [system, user('t'), calls('a', 'a'), result('a')], 'message 2: two calls share an id'],
    ['a system message in the middle', [system, user('t'), system], 'message 2: a system message after the start'],
  ];
  it.each(cases)('judges %s', (_name, messages, problem) => {
    expect(conversationProblem(messages)).toBe(problem);
  });
});

describe('blocksOf', () => {
  it('groups an assistant message with its results and skips the leading system prompt', () => {
    const messages = [system, user('t'), calls('a', 'b'), result('a'), result('b'), text('x'), user('u')];
    expect(blocksOf(messages)).toEqual([
      { start: 1, end: 2 },
      { start: 2, end: 5 },
      { start: 5, end: 6 },
      { start: 6, end: 7 },
    ]);
    expect(blocksOf([user('t')])).toEqual([{ start: 0, end: 1 }]);
  });
});

describe('estimateTokens', () => {
  it('is chars/3 without a report, and the report plus a third of the change since with one', () => {
    const messages = [system, user('x'.repeat(297))]; // 300 chars
    expect(estimateTokens(messages, null)).toBe(100);
    expect(estimateTokens(messages, { promptTokens: 500, chars: 300 })).toBe(500);
    expect(estimateTokens([...messages, user('y'.repeat(30))], { promptTokens: 500, chars: 300 })).toBe(510);
    expect(estimateTokens([system], { promptTokens: 500, chars: 300 })).toBe(401);
  });
});

describe('compact', () => {
  const big = (id: string): ChatMessage => result(id, 'z'.repeat(600));

  it('does nothing under the limit', async () => {
    expect(await compact([system, user('t'), text('a')], options())).toBeNull();
  });

  it('snips old tool results oldest first, keeps the last blocks whole, and stops under the target', async () => {
    const messages = [system, user('t'), calls('a'), big('a'), calls('b'), big('b'), calls('c'), big('c'), calls('d'), big('d')];
    let summarised = false;
    const done = await compact(messages, options({ limitTokens: 300, targetTokens: 500, summarise: async () => ((summarised = true), 'S') }));
    expect(done).not.toBeNull();
    expect(summarised).toBe(false);
    // 2488 chars ≈ 830 tokens; snipping a (−568 chars) leaves 640, snipping b too leaves 451.
    expect(done?.messages[3]).toEqual(result('a', '[tool result snipped: 600 chars]'));
    expect(done?.messages[5]).toEqual(result('b', '[tool result snipped: 600 chars]'));
    expect(done?.messages.slice(6)).toEqual(messages.slice(6));
    expect(done?.snipped).toBe(2);
    expect(done?.summarised).toBe(0);
    expect(done?.after).toBe(451);
    expect(done?.before).toBeGreaterThan(done?.after ?? Infinity);
    expect(conversationProblem(done?.messages ?? [])).toBeNull();
  });

  it('leaves small and already snipped results alone', async () => {
    const snippedBefore = result('a', '[tool result snipped: 900 chars]');
    const messages = [system, user('t'.repeat(900)), calls('a'), snippedBefore, calls('b'), result('b', 'small'), calls('c'), big('c'), text('end')];
    const done = await compact(messages, options({ limitTokens: 100, targetTokens: 50, keepBlocks: 1, summarise: async () => 'S' }));
    expect(done?.snipped).toBe(1); // only c's result
    expect(done?.summarised).toBeGreaterThan(0);
  });

  it('summarises the oldest part into one user message when snipping is not enough', async () => {
    const messages = [system, user('the task '.repeat(100)), calls('a'), big('a'), text('thinking '.repeat(100)), calls('b'), result('b', 'rb'), text('last')];
    let seen: readonly ChatMessage[] = [];
    const done = await compact(messages, options({ limitTokens: 100, targetTokens: 50, keepBlocks: 2, summarise: async (part) => ((seen = part), '  the gist  ') }));
    // Blocks: user, [calls a + result], text, [calls b + result], text — the last two are kept.
    expect(seen).toEqual([messages[1], calls('a'), result('a', '[tool result snipped: 600 chars]'), messages[4]]);
    expect(done?.messages).toEqual([system, user(`${SUMMARY_HEADING}\nthe gist`), calls('b'), result('b', 'rb'), text('last')]);
    expect(done?.summarised).toBe(4);
    expect(conversationProblem(done?.messages ?? [])).toBeNull();
  });

  it('joins the summary to a user message that follows it', async () => {
    const messages = [system, user('x'.repeat(900)), text('y'.repeat(900)), user('next task'), text('ok')];
    const done = await compact(messages, options({ limitTokens: 100, targetTokens: 50, keepBlocks: 2 }));
    expect(done?.messages).toEqual([system, user(`${SUMMARY_HEADING}\nSUMMARY\n\nnext task`), text('ok')]);
  });

  it('keeps the old part when its summary would be longer than it', async () => {
    const messages = [system, user('short'), text('y'.repeat(900)), text('z'.repeat(900))];
    const done = await compact(messages, options({ limitTokens: 100, targetTokens: 50, keepBlocks: 2, summarise: async () => 'w'.repeat(500) }));
    expect(done?.messages).toEqual(messages);
    expect(done?.summarised).toBe(0);
  });

  it('cannot summarise when every block is kept, and says how far it got', async () => {
    const messages = [system, user('x'.repeat(900)), text('y')];
    const done = await compact(messages, options({ limitTokens: 100, targetTokens: 50, keepBlocks: 4 }));
    expect(done?.messages).toEqual(messages);
    expect(done?.after).toBeGreaterThan(100);
  });
});

describe('compact: the invariant, randomized (fixed seed)', () => {
  function conversation(next: () => number): ChatMessage[] {
    const pick = (n: number): number => Math.floor(next() * n);
    const messages: ChatMessage[] = [system, user('task '.repeat(pick(200)))];
    let id = 0;
    const blocks = 1 + pick(25);
    for (let b = 0; b < blocks; b++) {
      const kind = pick(4);
      if (kind === 0) messages.push(user('u'.repeat(pick(800))));
      else if (kind === 1) messages.push(text('t'.repeat(pick(800))));
      else {
        const ids = Array.from({ length: 1 + pick(3) }, () => `call_${id++}`);
        messages.push({ ...calls(...ids), content: pick(2) === 0 ? null : 'c'.repeat(pick(300)) });
        // Results in any order, as a server may not care and a model may not either.
        for (const callId of [...ids].sort(() => next() - 0.5)) messages.push(result(callId, 'r'.repeat(pick(3000))));
      }
    }
    return messages;
  }

  it('never breaks a conversation, keeps the system prompt first and the last blocks unchanged (500 cases)', async () => {
    const next = seeded(20240611);
    const seen = { snipped: 0, summarised: 0, untouched: 0 };
    for (let n = 0; n < 500; n++) {
      const messages = conversation(next);
      expect(conversationProblem(messages)).toBeNull();
      const limit = 50 + Math.floor(next() * 3000);
      const keepBlocks = Math.floor(next() * 6);
      const baseline = next() < 0.5 ? null : { promptTokens: Math.floor(next() * 5000), chars: Math.floor(next() * 15000) };
      const done = await compact(messages, options({ limitTokens: limit, targetTokens: Math.floor(limit * 0.6), keepBlocks, baseline, summarise: async (part) => `summary of ${part.length}` }));
      const out = done?.messages ?? messages;
      const context = `case ${n}: ${messages.length} messages, limit ${limit}, keep ${keepBlocks}`;
      expect(conversationProblem(out), context).toBeNull();
      expect(out[0], context).toEqual(system);
      const kept = blocksOf(messages).slice(-keepBlocks || messages.length);
      if (keepBlocks > 0 && kept[0] !== undefined) {
        const tail = messages.slice(kept[0].start);
        // The first kept block may be a user message the summary was joined to: compare the rest.
        const joined = tail[0]?.role === 'user' && done !== null && done.summarised > 0 ? 1 : 0;
        expect(out.slice(out.length - tail.length + joined), context).toEqual(tail.slice(joined));
      }
      if (done === null) seen.untouched++;
      else {
        if (done.snipped > 0) seen.snipped++;
        if (done.summarised > 0) seen.summarised++;
        expect(done.after, context).toBeLessThanOrEqual(done.before);
        expect(out.filter((m) => m.role === 'tool').every((m) => messages.some((o) => o.role === 'tool' && o.tool_call_id === m.tool_call_id)), context).toBe(true);
      }
    }
    // The cases cover every path, not only the easy one.
    expect(seen.snipped).toBeGreaterThan(50);
    expect(seen.summarised).toBeGreaterThan(50);
    expect(seen.untouched).toBeGreaterThan(10);
  });
});

describe('renderForSummary and cap', () => {
  it('renders every role, names the calls, and caps long text with head and tail', () => {
    const rendered = renderForSummary([user('do it'), calls('a'), result('a', 'x'.repeat(5000)), text('done')], 100_000);
    expect(rendered).toContain('USER: do it');
    expect(rendered).toContain('[called read_file {"path":"a"}]');
    expect(rendered).toContain('TOOL RESULT: ');
    expect(rendered).toMatch(/\[… 3500 chars left out …\]/);
    expect(rendered).toContain('ASSISTANT: done');
    expect(cap('abcdefghij', 20)).toBe('abcdefghij');
    expect(cap('abcdefghij', 5)).toBe('abc\n[… 5 chars left out …]\nij');
  });
});
