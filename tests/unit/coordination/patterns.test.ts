/**
 * Claim patterns (src/coordination/patterns.ts), as the claim board and the git guard use them.
 * Covers:
 * - normalisation: `./`, `.` and empty segments and a trailing `/` go; an absolute path inside
 *   the root becomes relative; the root itself is the empty pattern; a path outside the root or
 *   with a `..` segment is refused (`refused`) naming the input;
 * - covering: a literal covers itself and everything beneath it (on `/` boundaries), a glob what
 *   picomatch matches with dot files and what lies beneath a directory it matches, a file whose
 *   name picomatch would read as a glob when claimed by that name; `coverTest` answers the same;
 * - overlap: literal/literal by prefix, literal/glob by matching, glob/glob by related static
 *   bases unless the final segments end in different literal suffixes; always symmetric.
 */
import { describe, expect, it } from 'vitest';
import { CapabilityError } from '../../../src/platform/errors.js';
import { coverTest, isGlob, normalisePattern, patternCovers, patternsOverlap } from '../../../src/coordination/patterns.js';

const ROOT = '/work/checkout';

function refusal(input: string): CapabilityError {
  try {
    normalisePattern(ROOT, input);
  } catch (error) {
    expect(error).toBeInstanceOf(CapabilityError);
    expect((error as CapabilityError).code).toBe('refused');
    expect((error as CapabilityError).status).toBe(422);
    return error as CapabilityError;
  }
  throw new Error(`${input} was not refused`);
}

describe('normalisePattern', () => {
  it.each([
    ['src/a.ts', 'src/a.ts'],
    ['./src/a.ts', 'src/a.ts'],
    ['././src//a/./b/', 'src/a/b'],
    ['src/a/', 'src/a'],
    ['src/**/*.ts', 'src/**/*.ts'],
    [`${ROOT}/src/a.ts`, 'src/a.ts'],
    [`${ROOT}//docs/`, 'docs'],
    [`${ROOT}/`, ''],
    [ROOT, ''],
    ['.', ''],
    ['./', ''],
    ['.github/workflows/ci.yml', '.github/workflows/ci.yml'],
    // A name that starts with two dots is a name, not a step up.
    [`${ROOT}/..foo`, '..foo'],
    ['..notes/x.md', '..notes/x.md'],
    // Already normal or nearly: the quick path must agree with the full one.
    ['a/.b/c', 'a/.b/c'],
    ['a/b./c', 'a/b./c'],
    ['a/./b', 'a/b'],
    ['a//b', 'a/b'],
    [' src/a.ts ', 'src/a.ts'],
    ['src\\a.ts', 'src/a.ts'],
    ['x', 'x'],
  ])('normalises %j to %j', (input, expected) => {
    expect(normalisePattern(ROOT, input)).toBe(expected);
  });

  it('refuses a step up and a negation whether or not the rest is normal', () => {
    expect(refusal('a/../b').message).toContain('outside the checkout');
    expect(refusal('..').message).toContain('outside the checkout');
    expect(refusal('!src/a.ts').message).toContain('negated');
  });

  it('accepts a root given with a trailing slash', () => {
    expect(normalisePattern(`${ROOT}/`, `${ROOT}/src/x`)).toBe('src/x');
  });

  it('refuses an absolute path outside the checkout and names it', () => {
    expect(refusal('/etc/passwd').message).toContain('"/etc/passwd" is outside the checkout');
    // A sibling whose name starts with the root's is outside too.
    expect(refusal(`${ROOT}-other/x`).message).toContain('is outside the checkout');
  });

  it('refuses a negated pattern, which picomatch reads as everything else', () => {
    expect(refusal('!src/**').message).toContain('is negated');
    expect(refusal('./!x').message).toContain('is negated');
  });

  it('refuses a path with a ".." segment, even one that would land inside', () => {
    expect(refusal('../x').message).toContain('"../x" is outside the checkout');
    expect(refusal('src/../a').message).toContain('"src/../a" is outside the checkout');
    expect(refusal(`${ROOT}/../etc`).message).toContain('is outside the checkout');
    // A name that merely contains two dots is a name.
    expect(normalisePattern(ROOT, 'src/a..b')).toBe('src/a..b');
  });
});

describe('patternCovers', () => {
  it('covers a literal path itself and everything beneath it, on segment boundaries', () => {
    expect(patternCovers('src/a.ts', 'src/a.ts')).toBe(true);
    expect(patternCovers('src/a', 'src/a/x.ts')).toBe(true);
    expect(patternCovers('src/a', 'src/a/deep/er/x.ts')).toBe(true);
    expect(patternCovers('src/a', 'src/ab.ts')).toBe(false);
    expect(patternCovers('src/a', 'src')).toBe(false);
    expect(patternCovers('src/a.ts', 'src/a.tsx')).toBe(false);
  });

  it('matches globs with picomatch, dot files included', () => {
    expect(patternCovers('src/**', 'src/a/b.ts')).toBe(true);
    expect(patternCovers('src/a/**', 'src/a')).toBe(true);
    expect(patternCovers('src/*.ts', 'src/x.ts')).toBe(true);
    expect(patternCovers('src/*.ts', 'src/a/x.ts')).toBe(false);
    expect(patternCovers('src/*', 'src/a/x.ts')).toBe(true); // beneath a directory the glob matches
    expect(patternCovers('**', '.github/workflows/ci.yml')).toBe(true);
    expect(patternCovers('src/**', 'src/.env')).toBe(true);
    expect(patternCovers('**/*.md', 'README.md')).toBe(true);
    expect(patternCovers('src/{a,b}/*.ts', 'src/b/x.ts')).toBe(true);
    expect(patternCovers('src/{a,b}/*.ts', 'src/c/x.ts')).toBe(false);
  });

  it('covers a file whose name picomatch would read as a glob when claimed by that exact name', () => {
    expect(isGlob('app/[id]/page.tsx')).toBe(true);
    expect(patternCovers('app/[id]', 'app/[id]/page.tsx')).toBe(true);
    expect(patternCovers('app/[id]/page.tsx', 'app/[id]/page.tsx')).toBe(true);
  });

  it('answers the same on a second call and through coverTest (compiled matchers are cached)', () => {
    const test = coverTest('lib/**/*.js');
    for (let round = 0; round < 3; round += 1) {
      expect(patternCovers('lib/**/*.js', 'lib/x/y.js')).toBe(true);
      expect(patternCovers('lib/**/*.js', 'lib/x/y.ts')).toBe(false);
      expect(test('lib/x/y.js')).toBe(true);
      expect(test('lib/x/y.ts')).toBe(false);
    }
  });

  it('covers everything with the empty pattern (the whole checkout)', () => {
    expect(patternCovers('', 'any/path.ts')).toBe(true);
  });
});

describe('patternsOverlap', () => {
  const both = (a: string, b: string): boolean => {
    const forward = patternsOverlap(a, b);
    expect(patternsOverlap(b, a), `symmetry of ${a} and ${b}`).toBe(forward);
    return forward;
  };

  it('overlaps literals when one is the other or lies beneath it', () => {
    expect(both('src/a.ts', 'src/a.ts')).toBe(true);
    expect(both('src', 'src/a.ts')).toBe(true);
    expect(both('src/a', 'src/a/b/c')).toBe(true);
    expect(both('src/a', 'src/ab')).toBe(false);
    expect(both('src/a.ts', 'src/b.ts')).toBe(false);
  });

  it('overlaps a literal and a glob when the glob covers the literal or lies inside it', () => {
    expect(both('src/a/x.ts', 'src/a/**')).toBe(true);
    expect(both('src/a/x.ts', 'src/**/*.ts')).toBe(true);
    expect(both('src', 'src/**/*.ts')).toBe(true); // the glob lies inside the directory
    expect(both('a/b/c/d', 'a/**/c')).toBe(true);
    expect(both('src/a/x.ts', 'src/*')).toBe(true); // beneath src/a, which the glob matches
    expect(both('src/a/x.ts', 'src/*.md')).toBe(false);
    expect(both('docs/x.md', 'src/**')).toBe(false);
    // The glob's fixed part sits above the literal, or a brace spans segments.
    expect(both('src/a', 'src/*/x.ts')).toBe(true);
    expect(both('src/a', 'src/*/x/*.ts')).toBe(true);
    expect(both('src/a/b', 'src/{a/b,c}/*.ts')).toBe(true);
    expect(both('lib/a', 'src/*/x.ts')).toBe(false);
    expect(both('src/a/y.ts', 'src/*/x.ts')).toBe(false);
    expect(both('src/a', 'src/b/*')).toBe(false);
  });

  it('overlaps globs whose static bases are related, unless their final extensions differ', () => {
    expect(both('src/**', 'src/a/*.ts')).toBe(true);
    expect(both('**', 'docs/*.md')).toBe(true);
    expect(both('src/**/*.ts', 'src/a/**/*.ts')).toBe(true);
    expect(both('src/*.ts', 'src/*.test.ts')).toBe(true);
    expect(both('src/**/*.ts', 'src/**/*.md')).toBe(false);
    expect(both('src/**/*.{ts,md}', 'src/**/*.md')).toBe(true); // a brace has no literal extension
    expect(both('src/a/**', 'src/b/**')).toBe(false);
    expect(both('lib/*.js', 'src/*.js')).toBe(false);
  });

  it('overlaps patterns that are the same text, even names picomatch reads as globs', () => {
    expect(both('app/[id]/page.tsx', 'app/[id]/page.tsx')).toBe(true);
    expect(both('app/[id]', 'app/[id]/page.tsx')).toBe(true);
  });
});
