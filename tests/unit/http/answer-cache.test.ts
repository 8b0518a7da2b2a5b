/**
 * The HTTP thread's memory of pure-query answers:
 * - an input is computed once, then answered from memory (key order does not matter);
 * - refusals that depend on the input are remembered, `busy` and `internal` never are;
 * - answers over the size bound are not kept, and the oldest entry goes first when full, by
 *   count or by total size;
 * - identical calls arriving together run once.
 */
import { describe, expect, it } from 'vitest';
import { AnswerCache, canonicalJson } from '../../../src/http/answer-cache.js';
import type { CallOutcome } from '../../../src/platform/call.js';

function counting(outcome: CallOutcome): { compute: () => Promise<CallOutcome>; calls: () => number } {
  let calls = 0;
  return {
    compute: async () => {
      calls += 1;
      return outcome;
    },
    calls: () => calls,
  };
}

describe('AnswerCache', () => {
  it('computes an input once and answers it from memory afterwards, whatever the key order', async () => {
    const cache = new AnswerCache({ maxEntries: 10, maxAnswerChars: 1000, maxTotalChars: 100_000 });
    const run = counting({ ok: true, json: '{"x":1}' });
    await cache.answer('objects.search', { query: 'a', limit: 5 }, run.compute);
    const again = await cache.answer('objects.search', { limit: 5, query: 'a' }, run.compute);
    expect(again).toEqual({ ok: true, json: '{"x":1}' });
    expect(run.calls()).toBe(1);
    expect(cache.stats).toMatchObject({ entries: 1, hits: 1, misses: 1 });
  });

  it('remembers a not_found refusal but never busy or internal', async () => {
    const cache = new AnswerCache({ maxEntries: 10, maxAnswerChars: 1000, maxTotalChars: 100_000 });
    const missing = counting({ ok: false, code: 'not_found', message: 'no object' });
    await cache.answer('objects.get', { uri: 'u' }, missing.compute);
    await cache.answer('objects.get', { uri: 'u' }, missing.compute);
    expect(missing.calls()).toBe(1);
    const busy = counting({ ok: false, code: 'busy', message: 'saturated' });
    await cache.answer('objects.get', { uri: 'v' }, busy.compute);
    await cache.answer('objects.get', { uri: 'v' }, busy.compute);
    expect(busy.calls()).toBe(2);
  });

  it('keeps no answer over the size bound and drops the least recently used entry when full', async () => {
    const cache = new AnswerCache({ maxEntries: 2, maxAnswerChars: 50, maxTotalChars: 100_000 });
    const big = counting({ ok: true, json: 'x'.repeat(100) });
    await cache.answer('objects.get', { uri: 'big' }, big.compute);
    await cache.answer('objects.get', { uri: 'big' }, big.compute);
    expect(big.calls()).toBe(2);

    const a = counting({ ok: true, json: '"a"' });
    const b = counting({ ok: true, json: '"b"' });
    const c = counting({ ok: true, json: '"c"' });
    await cache.answer('q.x', { k: 'a' }, a.compute);
    await cache.answer('q.x', { k: 'b' }, b.compute);
    await cache.answer('q.x', { k: 'a' }, a.compute); // a is now the most recent
    await cache.answer('q.x', { k: 'c' }, c.compute); // evicts b
    await cache.answer('q.x', { k: 'a' }, a.compute);
    await cache.answer('q.x', { k: 'b' }, b.compute);
    expect([a.calls(), b.calls(), c.calls()]).toEqual([1, 2, 1]);
  });

  it('writes canonical JSON with sorted keys at every depth', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });

  it('runs identical calls that arrive together once and answers them all', async () => {
    const cache = new AnswerCache({ maxEntries: 10, maxAnswerChars: 1000, maxTotalChars: 100_000 });
    const run = counting({ ok: true, json: '1' });
    const answers = await Promise.all([1, 2, 3, 4].map(() => cache.answer('objects.get', { uri: 'u' }, run.compute)));
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(run.calls()).toBe(1);
  });

  it('drops the least recently used answers to stay within the total size', async () => {
    const cache = new AnswerCache({ maxEntries: 10, maxAnswerChars: 100, maxTotalChars: 25 });
    for (const k of ['a', 'b', 'c']) await cache.answer('q.x', { k }, counting({ ok: true, json: k.repeat(10) }).compute);
    expect(cache.stats).toMatchObject({ entries: 2, chars: 20 });
  });
});
