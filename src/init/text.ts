/** What the merges of `init` share: a file's line ending, the refusal of a file they cannot read, nesting. */
import { MajordomusError } from '../platform/errors.js';

/** The file's line ending: CRLF when it has one, else LF. */
export function lineEnding(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** `text` ending in a line ending (an empty text stays empty), ready for a line to be appended. */
export function withFinalNewline(text: string, eol: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}${eol}`;
}

/** A configuration file `init` cannot merge into: named, and nothing is written. */
export function unparsable(file: string, why: string): MajordomusError {
  return new MajordomusError('MAJ_CONFIG_UNPARSABLE', `${file}: ${why}; nothing was written (fix the file, then run init again)`);
}

/** `value` under `path` (`['mcp', 'majordomus']` → `{mcp: {majordomus: value}}`). */
export function nestedUnder(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}
