/**
 * Merges one entry into a JSON client configuration (`.mcp.json`, `.gemini/settings.json`,
 * `opencode.json`) the way a person would edit it: jsonc-parser parses the file (comments and
 * trailing commas allowed) and locates the entry, one text edit inserts or replaces it, and
 * jsonc-parser applies it, so the user's other servers, key order, comments and indentation stay
 * byte for byte. (jsonc-parser's own `modify` re-formats the neighbouring property's line when
 * it inserts; hence the hand-made edit.) A file that does not parse is refused, never rewritten.
 */
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Edit, type Node, type ParseError } from 'jsonc-parser';
import { plainValue, type EntryMerge } from './merge.js';
import { lineEnding, nestedUnder, unparsable } from './text.js';

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false } as const;

/** Where an offset is, as a person counts (line and column from 1). */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** The file's indentation unit and line ending, so an inserted entry looks like its neighbours. */
export interface JsonLayout {
  unit: string;
  eol: string;
}

export function detectLayout(text: string): JsonLayout {
  const eol = lineEnding(text);
  const indented = /^([ \t]+)\S/m.exec(text)?.[1];
  if (indented?.startsWith('\t')) return { unit: '\t', eol };
  return { unit: ' '.repeat(indented?.length ?? 2), eol };
}

/** A JSON document of its own, for a file that does not exist yet. */
export function freshJson(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? '';
}

/** Whether only whitespace stands before `offset` on its line. */
function startsLine(text: string, offset: number): boolean {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return text.slice(start, offset).trim() === '';
}

/** `value` as JSON indented for a property whose line starts with `indent`. */
function render(value: unknown, indent: string, layout: JsonLayout): string {
  return JSON.stringify(value, null, layout.unit).split('\n').join(`${layout.eol}${indent}`);
}

/**
 * The edits that add `"key": value` as the last property of `object`, on a line of its own,
 * indented like its siblings; a comment at the end of the last sibling's line stays there.
 */
function insertProperty(text: string, object: Node, key: string, value: unknown, layout: JsonLayout): Edit[] {
  const properties = object.children ?? [];
  const last = properties.at(-1);
  const objectIndent = lineIndent(text, object.offset);
  if (last === undefined) {
    const indent = objectIndent + layout.unit;
    const property = `${JSON.stringify(key)}: ${render(value, indent, layout)}`;
    const inside = text.slice(object.offset + 1, object.offset + object.length - 1);
    if (inside.trim() === '') {
      return [{ offset: object.offset, length: object.length, content: `{${layout.eol}${indent}${property}${layout.eol}${objectIndent}}` }];
    }
    return [{ offset: object.offset + 1, length: 0, content: `${layout.eol}${indent}${property},` }];
  }
  const indent = startsLine(text, last.offset) ? lineIndent(text, last.offset) : objectIndent + layout.unit;
  const property = `${layout.eol}${indent}${JSON.stringify(key)}: ${render(value, indent, layout)}`;
  const end = last.offset + last.length;
  const lineEnd = text.indexOf('\n', end) < 0 ? text.length : text.indexOf('\n', end);
  const rest = text.slice(end, lineEnd).replace(/\r$/, '');
  const comma = /^\s*,/.exec(rest);
  const afterComma = comma === null ? end : end + comma[0].length;
  if (/^\s*,?\s*\/\/.*$/.test(rest)) {
    // `"last": 1, // note`: the note stays with its property; ours goes on the next line.
    return [...(comma === null ? [{ offset: end, length: 0, content: ',' }] : []), { offset: end + rest.length, length: 0, content: property }];
  }
  return [{ offset: afterComma, length: 0, content: comma === null ? `,${property}` : property }];
}

/**
 * Sets `path` (e.g. `['mcpServers', 'majordomus']`) to `value` in the JSON (with comments) `text`
 * by the smallest text edit: the rest of the file, comments and layout included, is kept byte for
 * byte. An equal entry is left alone; a differing one is a conflict, replaced only when `force`.
 */
export function mergeJsonEntry(file: string, text: string, path: readonly string[], value: unknown, force: boolean): EntryMerge {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, PARSE_OPTIONS);
  const [first] = errors;
  if (first !== undefined) throw unparsable(file, `not valid JSON: ${printParseErrorCode(first.error)} at ${position(text, first.offset)}`);
  if (tree === undefined || tree.type !== 'object') throw unparsable(file, 'the top level must be a JSON object');
  for (let depth = 1; depth < path.length; depth += 1) {
    const parent = findNodeAtLocation(tree, path.slice(0, depth));
    if (parent !== undefined && parent.type !== 'object') throw unparsable(file, `"${path.slice(0, depth).join('.')}" must be an object, not ${parent.type}`);
  }
  const existing = findNodeAtLocation(tree, [...path]);
  const current = existing === undefined ? undefined : plainValue(getNodeValue(existing));
  if (existing !== undefined && isDeepStrictEqual(current, plainValue(value))) return { text, conflict: null };
  const conflict = existing === undefined ? null : `"${path.join('.')}" is already ${JSON.stringify(current)}`;
  if (conflict !== null && !force) return { text, conflict, existing: current };

  const layout = detectLayout(text);
  let edits: Edit[];
  if (existing !== undefined) {
    const indent = lineIndent(text, existing.parent?.offset ?? existing.offset);
    edits = [{ offset: existing.offset, length: existing.length, content: render(value, indent, layout) }];
  } else {
    let depth = path.length - 1;
    while (depth > 0 && findNodeAtLocation(tree, path.slice(0, depth)) === undefined) depth -= 1;
    const parent = depth === 0 ? tree : (findNodeAtLocation(tree, path.slice(0, depth)) as Node);
    edits = insertProperty(text, parent, path[depth] as string, nestedUnder(path.slice(depth + 1), value), layout);
  }
  const merged = applyEdits(text, edits);
  const check: ParseError[] = [];
  const after = parseTree(merged, check, PARSE_OPTIONS);
  const placed = after === undefined ? undefined : findNodeAtLocation(after, [...path]);
  if (check.length > 0 || placed === undefined || !isDeepStrictEqual(plainValue(getNodeValue(placed)), plainValue(value))) {
    throw unparsable(file, `"${path.join('.')}" could not be added as text without changing the rest of the file; add it by hand`);
  }
  return conflict === null ? { text: merged, conflict } : { text: merged, conflict, existing: current };
}
