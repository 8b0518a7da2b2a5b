/** What merging one entry into an existing configuration file did. */
export interface EntryMerge {
  /** The file's text after the merge (the same text when nothing changes). */
  text: string;
  /**
   * Set when the file already held a differing entry of that name: what it holds. Without
   * `--force` the text is then unchanged and `init` refuses; with it the entry was replaced.
   */
  conflict: string | null;
  /** With a conflict: the differing entry, as data (its command may name a path of another machine). */
  existing?: unknown;
}

/**
 * The value with plain objects where a parser made prototype-less ones (jsonc-parser and
 * smol-toml both do), so that equal documents compare equal with `isDeepStrictEqual`.
 */
export function plainValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainValue);
  if (value !== null && typeof value === 'object') {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype === null || prototype === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plainValue(inner)]));
    }
  }
  return value;
}
