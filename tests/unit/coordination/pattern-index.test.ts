/**
 * The pattern index answers exactly what testing every pattern would: for 400 seeded random
 * patterns (plain paths, directory globs, suffix globs, braces, `**` in the middle, dot files) and
 * 400 random paths (some with a directory named like a file, `old.p3.ts/`, which a suffix glob
 * covers through that ancestor), `covering` equals the brute-force `patternCovers` and
 * `overlapping` equals the brute-force `patternsOverlap`; removing an owner removes all its patterns.
 */
import { describe, expect, it } from 'vitest';
import { PatternIndex } from '../../../src/coordination/pattern-index.js';
import { patternCovers, patternsOverlap } from '../../../src/coordination/patterns.js';

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const DIRS = ['src', 'src/a', 'src/a/b', 'src/b', 'docs', '.github', 'tests/unit', ''];
const NAMES = ['x.ts', 'y.md', 'z.p3.ts', '.env', 'README.md', 'lexer.ts'];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)] as T;
}

function pattern(next: () => number): string {
  const dir = pick(next, DIRS);
  const join = (...parts: string[]) => parts.filter(Boolean).join('/');
  switch (Math.floor(next() * 7)) {
    case 0:
      return join(dir, pick(next, NAMES));
    case 1:
      return dir === '' ? '**' : dir;
    case 2:
      return join(dir, '**');
    case 3:
      return join(dir, '**', `*${pick(next, ['.ts', '.md', '.p3.ts'])}`);
    case 4:
      return join(dir, '*');
    case 5:
      return join(dir, '{a,b}', '*.ts');
    default:
      return join(dir, '*', pick(next, NAMES));
  }
}

function path(next: () => number): string {
  const depth = Math.floor(next() * 3);
  const dirs = Array.from({ length: depth }, () => pick(next, ['a', 'b', 'c', '.git', 'old.p3.ts', 'v.md']));
  return [pick(next, DIRS.filter(Boolean)), ...dirs, pick(next, NAMES)].join('/');
}

describe('PatternIndex', () => {
  it('answers exactly what testing every pattern would', () => {
    const next = random(12);
    const index = new PatternIndex<number>();
    const patterns = Array.from({ length: 400 }, () => pattern(next));
    patterns.forEach((p, owner) => index.add(owner, [p]));
    for (let i = 0; i < 400; i += 1) {
      const asked = path(next);
      const expected = patterns.flatMap((p, owner) => (patternCovers(p, asked) ? [owner] : []));
      expect([...index.covering(asked)].sort((a, b) => a - b), asked).toEqual(expected);
    }
    for (let i = 0; i < 100; i += 1) {
      const mine = pattern(next);
      const expected = patterns.flatMap((p, owner) => (patternsOverlap(mine, p) ? [`${owner}:${p}`] : []));
      const found = index.overlapping(mine).map(({ owner, theirs }) => `${owner}:${theirs}`);
      expect(found.sort(), mine).toEqual(expected.sort());
    }
  });

  it('forgets every pattern of an owner it removes', () => {
    const index = new PatternIndex<string>();
    index.add('c1', ['src/a', 'docs/**/*.md']);
    index.add('c2', ['src/**']);
    expect([...index.covering('src/a/x.ts')].sort()).toEqual(['c1', 'c2']);
    index.remove('c1');
    expect([...index.covering('src/a/x.ts')]).toEqual(['c2']);
    expect([...index.covering('docs/a/b.md')]).toEqual([]);
    expect(index.overlapping('docs')).toEqual([]);
  });
});
