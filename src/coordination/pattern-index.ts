/**
 * Claim patterns indexed by their static base (the literal directories before the first glob
 * character; a plain path is its own base). A pattern can cover a path only if its base is the
 * path or one of its ancestors, so a check meets the few patterns filed under the path's prefixes
 * instead of every pattern of every claim; a glob ending in a literal suffix (`*.ts`) is tried only
 * on paths that contain it. Overlap between claims narrows the same way: two patterns can overlap
 * only if their bases are nested.
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

export class PatternIndex<T> {
  readonly #byBase = new Map<string, Set<Entry<T>>>();
  readonly #entries = new Map<T, Array<{ base: string; entry: Entry<T> }>>();

  add(owner: T, patterns: readonly string[]): void {
    const filed = patterns.map((pattern) => {
      const base = staticBase(pattern);
      const entry: Entry<T> = { owner, pattern, covers: coverTest(pattern), suffix: literalSuffix(pattern, base) };
      const bucket = this.#byBase.get(base) ?? new Set<Entry<T>>();
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
    const test = (base: string): void => {
      for (const entry of this.#byBase.get(base) ?? []) {
        if (owners.has(entry.owner) || (entry.suffix !== null && !path.includes(entry.suffix))) continue;
        if (entry.covers(path)) owners.add(entry.owner);
      }
    };
    test('');
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) test(path.slice(0, end));
    if (path !== '') test(path);
    return owners;
  }

  /** Every filed pattern that may overlap `pattern`, with its owner. */
  overlapping(pattern: string): Array<{ owner: T; theirs: string }> {
    const base = staticBase(pattern);
    const found: Array<{ owner: T; theirs: string }> = [];
    for (const [filed, bucket] of this.#byBase) {
      if (!within(filed, base) && !within(base, filed)) continue;
      for (const entry of bucket) if (patternsOverlap(pattern, entry.pattern)) found.push({ owner: entry.owner, theirs: entry.pattern });
    }
    return found;
  }
}
