/**
 * YAML documents and Markdown front matter. The YAML is parsed by the `yaml` package (duplicate
 * keys, several documents and syntax errors are all refusals); this module only finds where the
 * front matter starts and ends, it never interprets YAML itself.
 */
import { parseDocument } from 'yaml';

/** The outcome of reading a YAML text: a plain value, or why it is not one. */
export type YamlResult = { ok: true; value: unknown } | { ok: false; message: string };

/** The outcome of splitting a Markdown file into front matter and body. */
export type FrontMatterResult =
  | { kind: 'none'; body: string }
  | { kind: 'present'; data: Record<string, unknown>; body: string }
  | { kind: 'error'; code: 'malformed_front_matter' | 'malformed_yaml'; message: string };

// Aliases are legal YAML but a billion-laughs document must not stall the index build.
const MAX_ALIAS_COUNT = 100;

/**
 * Parses one YAML document. `lineOffset` is added to reported line numbers so that an error in
 * front matter names the line of the file, not of the extracted block.
 */
export function parseYaml(text: string, lineOffset = 0): YamlResult {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = document.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0]?.line;
    const summary = (first.message.split('\n')[0] ?? first.message)
      .replace(/ at line \d+, column \d+:?$/, '')
      // The parser's advice is for programmers; a layer file must simply be one document.
      .replace('; please use YAML.parseAllDocuments()', ' (a layer file is one YAML document)');
    return { ok: false, message: line === undefined ? summary : `${summary} (line ${line + lineOffset})` };
  }
  try {
    return { ok: true, value: document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** True for a YAML mapping turned into a JS object (not an array, a scalar or null). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const FENCE = /^---[ \t]*$/;

/**
 * Splits `text` into YAML front matter and body. Front matter exists only when the very first line
 * is `---`; it ends at the next line that is `---`. An empty block is an empty mapping.
 */
export function splitFrontMatter(text: string): FrontMatterResult {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const firstBreak = source.indexOf('\n');
  const firstLine = stripCr(firstBreak === -1 ? source : source.slice(0, firstBreak));
  if (!FENCE.test(firstLine)) return { kind: 'none', body: source };
  if (firstBreak === -1) {
    return { kind: 'error', code: 'malformed_front_matter', message: 'front matter opens with --- on line 1 but is never closed' };
  }

  let start = firstBreak + 1;
  while (start <= source.length) {
    const end = source.indexOf('\n', start);
    const current = stripCr(end === -1 ? source.slice(start) : source.slice(start, end));
    if (FENCE.test(current)) {
      const yamlText = source.slice(firstBreak + 1, start);
      const body = end === -1 ? '' : source.slice(end + 1);
      const parsed = parseYaml(yamlText, 1);
      if (!parsed.ok) return { kind: 'error', code: 'malformed_yaml', message: `front matter is not valid YAML: ${parsed.message}` };
      if (parsed.value === null || parsed.value === undefined) return { kind: 'present', data: {}, body };
      if (!isMapping(parsed.value)) {
        const got = Array.isArray(parsed.value) ? 'a sequence' : `a ${typeof parsed.value}`;
        return { kind: 'error', code: 'malformed_front_matter', message: `front matter must be a YAML mapping, got ${got}` };
      }
      return { kind: 'present', data: parsed.value, body };
    }
    if (end === -1) break;
    start = end + 1;
  }
  return { kind: 'error', code: 'malformed_front_matter', message: 'front matter opens with --- on line 1 but no closing --- line follows' };
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
