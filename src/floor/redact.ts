/**
 * Redaction by content, the floor's last line: before any tool output reaches the model, every
 * occurrence of a protected file's secret values is replaced. It is what catches a secret that
 * bash reached without naming the file (a copy committed to git history, a file the masking did
 * not cover); it cannot catch an encoded copy (docs/EXECUTOR-FLOOR.md says so).
 *
 * Secret values of a file: each trimmed line of 8 characters or more, and for `KEY=VALUE`,
 * `KEY: VALUE` and `"key": "value"` lines the value of 6 characters or more (quotes removed).
 * One RegExp of the escaped values, longest first, so a value that contains another is replaced
 * whole and the output is scanned once.
 *
 * What is not secret is never redacted, even where a protected file happens to hold it: the
 * checkout's path and every path above or below it (`pwd`, a compiler's absolute paths), the
 * names of the checkout's files, the task and session ids — the caller names them (`public`).
 * Hiding them would cost the model its bearings and protect nothing.
 */

/** What replaces a secret value in a tool's output. */
export const REDACTION_MARK = '[redacted: protected content]';

/** How much of each protected file is read for its values. */
export const REDACT_FILE_CAP = 64 * 1024;

/** A bound on the alternatives of the one RegExp (a huge protected file must not stall every tool). */
const MAX_VALUES = 20_000;
const MIN_LINE = 8;
const MIN_VALUE = 6;

const ASSIGNMENT = /^\s*(?:export\s+)?["']?[\w.-]+["']?\s*[:=]\s*(.*?)\s*,?\s*$/;

/** The secret values a protected file's text holds. */
export function secretValues(text: string): string[] {
  const values: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.length >= MIN_LINE) values.push(line);
    const assigned = ASSIGNMENT.exec(line)?.[1];
    if (assigned === undefined) continue;
    const value = assigned.replace(/^(["'])(.*)\1$/, '$2').trim();
    if (value.length >= MIN_VALUE) values.push(value);
  }
  return values;
}

/** Whether `value` is an absolute path that is `root`, above it or below it. */
function isPathAround(value: string, root: string): boolean {
  if (!value.startsWith('/')) return false;
  const trimmed = value.length > 1 ? value.replace(/\/+$/, '') : value;
  return trimmed === root || root.startsWith(`${trimmed}/`) || trimmed === '/' || trimmed.startsWith(`${root}/`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces known secret values in text. */
export class Redactor {
  #pattern: RegExp | undefined;
  /** How many distinct values it replaces. */
  readonly size: number;
  /** The longest value in bytes: a buffer cut this far from a value's start still holds all of it. */
  readonly longestBytes: number;

  /**
   * `values`: the secrets. `options.public`: values that are never secret; `options.root`: the
   * checkout, whose path and every path above or below it are public too.
   */
  constructor(values: Iterable<string>, options: { public?: Iterable<string>; root?: string } = {}) {
    const known = new Set(options.public ?? []);
    const root = options.root;
    const isPublic = (value: string): boolean => known.has(value) || (root !== undefined && isPathAround(value, root));
    const unique = [...new Set(values)].filter((value) => value.length > 0 && !isPublic(value));
    unique.sort((a, b) => b.length - a.length);
    const kept = unique.slice(0, MAX_VALUES);
    this.size = kept.length;
    this.longestBytes = kept.reduce((longest, value) => Math.max(longest, Buffer.byteLength(value)), 0);
    this.#pattern = kept.length === 0 ? undefined : new RegExp(kept.map(escapeRegExp).join('|'), 'g');
  }

  redact(text: string): string {
    if (this.#pattern === undefined || text === '') return text;
    return text.replace(this.#pattern, REDACTION_MARK);
  }

  /**
   * The first `keep` characters of `text`, redacted, where a value that starts before the cut is
   * replaced whole (so no prefix of it survives). `text` must run on past the cut by the longest value.
   */
  redactHead(text: string, keep: number): string {
    if (this.#pattern === undefined) return text.slice(0, keep);
    let out = '';
    let cursor = 0;
    for (const match of text.matchAll(this.#pattern)) {
      if (match.index >= keep) break;
      out += text.slice(cursor, match.index) + REDACTION_MARK;
      cursor = match.index + match[0].length;
    }
    return cursor < keep ? out + text.slice(cursor, keep) : out;
  }

  /** The last `keep` characters of `text`, redacted, where a value that ends after the cut is replaced whole. */
  redactTail(text: string, keep: number): string {
    const start = Math.max(0, text.length - keep);
    if (this.#pattern === undefined) return text.slice(start);
    let out = '';
    let cursor = start;
    for (const match of text.matchAll(this.#pattern)) {
      const end = match.index + match[0].length;
      if (end <= start) continue;
      out += text.slice(cursor, Math.max(cursor, match.index)) + REDACTION_MARK;
      cursor = end;
    }
    return out + text.slice(cursor);
  }
}
