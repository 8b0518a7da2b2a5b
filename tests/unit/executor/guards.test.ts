/**
 * The loop guard. Covers: the fourth identical call in a row trips it (naming the tool), whatever
 * the key order or spacing of its JSON; a different call or different arguments start the count
 * again; the fifth identical text trips it; empty texts are not counted.
 */
import { describe, expect, it } from 'vitest';
import { canonicalArguments, LoopGuard } from '../../../src/executor/guards.js';

describe('LoopGuard', () => {
  it('trips on the fourth identical call in a row, whatever the key order and spacing', () => {
    const guard = new LoopGuard();
    expect(guard.noteCall('read_file', '{"path":"a","limit":5}')).toBeNull();
    expect(guard.noteCall('read_file', '{ "limit": 5, "path": "a" }')).toBeNull();
    expect(guard.noteCall('read_file', '{"path":"a","limit":5}')).toBeNull();
    expect(guard.noteCall('read_file', '{"limit":5,"path":"a"}')).toBe('the model called read_file with the same arguments 4 times in a row');
  });

  it('starts counting again after a different call or different arguments', () => {
    const guard = new LoopGuard();
    const calls: [string, string][] = [
      ['glob', '{"pattern":"*"}'],
      ['glob', '{"pattern":"*"}'],
      ['glob', '{"pattern":"*"}'],
      ['grep', '{"pattern":"*"}'],
      ['glob', '{"pattern":"*"}'],
      ['glob', '{"pattern":"*"}'],
      ['glob', '{"pattern":"**"}'],
      ['glob', '{"pattern":"*"}'],
    ];
    expect(calls.map(([name, args]) => guard.noteCall(name, args))).toEqual(calls.map(() => null));
  });

  it('trips on the fifth identical text in a row and ignores empty texts', () => {
    const guard = new LoopGuard();
    const verdicts = ['Let me check.', '', 'Let me check.', '  ', 'Let me check.', 'Let me check. '].map((t) => guard.noteText(t));
    expect(verdicts).toEqual([null, null, null, null, null, null]);
    expect(guard.noteText('Let me check.')).toBe('the model wrote the same text 5 times in a row');
    expect(guard.noteText('Something else')).toBeNull();
  });

  it('compares invalid JSON as trimmed text', () => {
    expect(canonicalArguments(' {oops ')).toBe('{oops');
    expect(canonicalArguments('{"b":[{"d":1,"c":2}],"a":null}')).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});
