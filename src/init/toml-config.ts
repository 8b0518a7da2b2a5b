/**
 * Merges one table (`[mcp_servers.majordomus]`) into a TOML file (`.codex/config.toml`) without
 * re-serialising the rest: TOML libraries drop comments and layout, so the table is appended or
 * its block of lines replaced as text, and everything else stays byte for byte. smol-toml checks
 * the file before, and after: the edited file must parse to the original document with exactly
 * that table set, or the edit is refused (a layout we cannot edit safely is said, not guessed).
 */
import { isDeepStrictEqual } from 'node:util';
import { parse, type TomlPrimitive, type TomlTable } from 'smol-toml';
import { plainValue, type EntryMerge } from './merge.js';
import { lineEnding, unparsable, withFinalNewline } from './text.js';

/** The values `init` writes: strings, numbers, booleans and arrays of strings. */
export type TomlEntry = Readonly<Record<string, string | number | boolean | readonly string[]>>;

function parseToml(file: string, text: string): TomlTable {
  try {
    return plainValue(parse(text)) as TomlTable;
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw unparsable(file, `not valid TOML: ${first}`);
  }
}

/** A bare key when TOML allows one, a quoted key otherwise. */
function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function tomlValue(value: string | number | boolean | readonly string[]): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`;
}

/** The table as lines of text, header first, ending with a line break. */
export function renderTomlTable(path: readonly string[], entry: TomlEntry, eol = '\n'): string {
  const lines = [`[${path.map(tomlKey).join('.')}]`, ...Object.entries(entry).map(([key, value]) => `${tomlKey(key)} = ${tomlValue(value)}`)];
  return `${lines.join(eol)}${eol}`;
}

/** The key path a header line names (`[a."b".c]` → a, b, c), or null for a line that is not one. */
function headerPath(line: string): string[] | null {
  if (!/^\s*\[/.test(line)) return null;
  let value: unknown;
  try {
    value = parse(`${line}\n`);
  } catch {
    return null;
  }
  const path: string[] = [];
  while (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length !== 1) break;
    const key = keys[0] as string;
    path.push(key);
    const next: unknown = (value as Record<string, unknown>)[key];
    value = Array.isArray(next) ? next[0] : next;
  }
  return path;
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}

function valueAt(document: TomlTable, path: readonly string[]): unknown {
  let value: unknown = document;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The document with `path` set to `entry` (parents created), for checking an edit. */
function withEntry(document: TomlTable, path: readonly string[], entry: TomlEntry): TomlTable {
  const copy = plainValue(document) as Record<string, unknown>;
  let table = copy;
  for (const key of path.slice(0, -1)) {
    table[key] ??= {};
    table = table[key] as Record<string, unknown>;
  }
  table[path.at(-1) as string] = plainValue(entry) as TomlPrimitive;
  return copy as TomlTable;
}

/** The lines of `[path]` and its sub-tables: from its header to the next other header, less trailing blank and comment lines. */
function tableBlock(lines: readonly string[], path: readonly string[]): { start: number; end: number } | null {
  const start = lines.findIndex((line) => {
    const named = headerPath(line);
    return named !== null && !/^\s*\[\[/.test(line) && isDeepStrictEqual(named, [...path]);
  });
  if (start < 0) return null;
  let end = start + 1;
  while (end < lines.length) {
    const named = headerPath(lines[end] as string);
    if (named !== null && !startsWith(named, path)) break;
    end += 1;
  }
  // Comments and blank lines just above the next header belong to it.
  while (end > start + 1 && /^\s*(#.*)?$/.test(lines[end - 1] as string)) end -= 1;
  return { start, end };
}

/**
 * Sets the table `path` to `entry` in the TOML `text`. An equal table is left alone; a differing
 * one is a conflict, replaced only when `force` (and only when it is written as a `[table]` block).
 */
export function mergeTomlTable(file: string, text: string, path: readonly string[], entry: TomlEntry, force: boolean): EntryMerge {
  const document = parseToml(file, text);
  const current = valueAt(document, path);
  const wanted = withEntry(document, path, entry);
  if (current !== undefined && isDeepStrictEqual(current, valueAt(wanted, path))) return { text, conflict: null };
  const conflict = current === undefined ? null : `[${path.join('.')}] is already ${JSON.stringify(current)}`;
  if (conflict !== null && !force) return { text, conflict, existing: current };

  const eol = lineEnding(text);
  const table = renderTomlTable(path, entry, eol);
  let edited: string;
  if (current === undefined) {
    const ended = withFinalNewline(text, eol);
    const gap = ended === '' || ended.endsWith(`${eol}${eol}`) ? '' : eol;
    edited = `${ended}${gap}${table}`;
  } else {
    const lines = text.split('\n');
    const block = tableBlock(lines, path);
    if (block === null) throw unparsable(file, `[${path.join('.')}] is not written as a table of its own, so init cannot replace it safely; replace it by hand`);
    const replaced = table.replace(/\r?\n$/, '').split('\n');
    edited = [...lines.slice(0, block.start), ...replaced, ...lines.slice(block.end)].join('\n');
  }
  let check: TomlTable | null = null;
  try {
    check = plainValue(parse(edited)) as TomlTable;
  } catch {
    check = null;
  }
  if (check === null || !isDeepStrictEqual(check, wanted)) {
    throw unparsable(file, `adding [${path.join('.')}] as text would not give the intended document (is "${path.slice(0, -1).join('.')}" an inline table?); add it by hand`);
  }
  return conflict === null ? { text: edited, conflict } : { text: edited, conflict, existing: current };
}
