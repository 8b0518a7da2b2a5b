/**
 * Claim patterns indexed by their static base (the literal directories before the first glob
 * character; a plain path is its own base). A pattern can cover a path only if its base is the
 * path or one of its ancestors, so a check meets the few patterns filed under the path's prefixes
 * instead of every pattern of every claim. Within a base, a glob ending in a literal suffix
 * (`*.p3.ts`) is filed under that suffix: whatever it covers ends a segment of the path with it
 * (the path itself or an ancestor matches the glob), so a path looks up the few suffixes that end
 * its segments instead of trying every such glob (a hundred `src/**\/*.p<k>.ts` claims cost a
 * hundred substring searches per checked path before). Overlap between claims narrows by base:
 * two patterns can overlap only if their bases are nested.
 */
import { coverTest, patternsOverlap, staticBase } from './patterns.js';

interface Entry<T> {
  owner: T;
  pattern: string;
  covers: (path: string) => boolean;
  /** A literal suffix every covered path contains (`.ts` of `src/**\/*.ts`), or null. */
  suffix: string | null;
}

/** `a` is `b` or lies beneath it; the empty base is above everything. */
function within(a: string, b: string): boolean {
  return b === '' || a === b || a.startsWith(`${b}/`);
}

/** The literal end of a glob's last segment (`*.p3.ts` → `.p3.ts`), or null. */
function literalSuffix(pattern: string, base: string): string | null {
  if (pattern === base) return null; // a plain path
  const last = pattern.slice(pattern.lastIndexOf('/') + 1);
  const match = /[^*?\])}]+$/.exec(last);
  return match && match[0].length < last.length && !/[{(![]/.test(match[0]) ? match[0] : null;
}

/** The patterns filed under one static base. */
class Bucket<T> {
  /** Patterns without a literal suffix: each is tried. */
  readonly plain = new Set<Entry<T>>();
  /** Globs by their literal suffix: tried only where the suffix ends a segment of the path. */
  readonly bySuffix = new Map<string, Set<Entry<T>>>();
  /** The lengths of those suffixes, with how many globs have each. */
  readonly lengths = new Map<number, number>();
  size = 0;

  add(entry: Entry<T>): void {
    this.size += 1;
    if (entry.suffix === null) {
      this.plain.add(entry);
      return;
    }
    const same = this.bySuffix.get(entry.suffix) ?? new Set<Entry<T>>();
    same.add(entry);
    this.bySuffix.set(entry.suffix, same);
    this.lengths.set(entry.suffix.length, (this.lengths.get(entry.suffix.length) ?? 0) + 1);
  }

  delete(entry: Entry<T>): void {
    if (entry.suffix === null) {
      if (this.plain.delete(entry)) this.size -= 1;
      return;
    }
    const same = this.bySuffix.get(entry.suffix);
    if (!same?.delete(entry)) return;
    this.size -= 1;
    if (same.size === 0) this.bySuffix.delete(entry.suffix);
    const left = (this.lengths.get(entry.suffix.length) ?? 1) - 1;
    if (left === 0) this.lengths.delete(entry.suffix.length);
    else this.lengths.set(entry.suffix.length, left);
  }

  *entries(): Generator<Entry<T>> {
    yield* this.plain;
    for (const same of this.bySuffix.values()) yield* same;
  }
}

export class PatternIndex<T> {
  readonly #byBase = new Map<string, Bucket<T>>();
  readonly #entries = new Map<T, Array<{ base: string; entry: Entry<T> }>>();

  add(owner: T, patterns: readonly string[]): void {
    const filed = patterns.map((pattern) => {
      const base = staticBase(pattern);
      const entry: Entry<T> = { owner, pattern, covers: coverTest(pattern), suffix: literalSuffix(pattern, base) };
      const bucket = this.#byBase.get(base) ?? new Bucket<T>();
      bucket.add(entry);
      this.#byBase.set(base, bucket);
      return { base, entry };
    });
    this.#entries.set(owner, filed);
  }

  remove(owner: T): void {
    for (const { base, entry } of this.#entries.get(owner) ?? []) {
      const bucket = this.#byBase.get(base);
      bucket?.delete(entry);
      if (bucket?.size === 0) this.#byBase.delete(base);
    }
    this.#entries.delete(owner);
  }

  /** The owners with a pattern covering `path` (a checkout-relative file or directory). */
  covering(path: string): Set<T> {
    const owners = new Set<T>();
    // Where the path's segments end: a covering glob's literal suffix ends at one of them.
    const ends: number[] = [];
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) ends.push(end);
    if (path !== '') ends.push(path.length);
    const tryEntry = (entry: Entry<T>): void => {
      if (!owners.has(entry.owner) && entry.covers(path)) owners.add(entry.owner);
    };
    const test = (base: string): void => {
      const bucket = this.#byBase.get(base);
      if (bucket === undefined) return;
      for (const entry of bucket.plain) tryEntry(entry);
      if (bucket.bySuffix.size === 0) return;
      for (const length of bucket.lengths.keys()) {
        for (const end of ends) {
          if (end - length < base.length) continue;
          const same = bucket.bySuffix.get(path.slice(end - length, end));
          if (same !== undefined) for (const entry of same) tryEntry(entry);
        }
      }
    };
    test('');
    for (const end of ends) test(path.slice(0, end));
    return owners;
  }

  /** Every filed pattern that may overlap `pattern`, with its owner. */
  overlapping(pattern: string): Array<{ owner: T; theirs: string }> {
    const base = staticBase(pattern);
    const found: Array<{ owner: T; theirs: string }> = [];
    for (const [filed, bucket] of this.#byBase) {
      if (!within(filed, base) && !within(base, filed)) continue;
      for (const entry of bucket.entries()) if (patternsOverlap(pattern, entry.pattern)) found.push({ owner: entry.owner, theirs: entry.pattern });
    }
    return found;
  }
}
