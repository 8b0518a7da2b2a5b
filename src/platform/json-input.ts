/**
 * JSON from a client, read at the edge with bounds: UTF-8 that is not valid is refused (never
 * decoded lossily), and nesting deeper than `MAX_JSON_DEPTH` is refused before it is parsed.
 * Deep nesting is no use to any capability and costs the server dearly further in (recursive
 * validation, structured clones between threads), so it stops here with a clear answer.
 */

/** The deepest nesting of arrays and objects accepted from a client. */
export const MAX_JSON_DEPTH = 64;

export type JsonInputProblem = 'utf8' | 'syntax' | 'depth';

export class JsonInputError extends Error {
  override name = 'JsonInputError';
  constructor(
    readonly problem: JsonInputProblem,
    message: string,
    /** For `depth`: the parsed value (JSON.parse itself is not recursive), so an id can be read. */
    readonly value?: unknown,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes bytes that must be UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new JsonInputError('utf8', 'the body is not valid UTF-8');
  }
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `text` nests arrays and objects deeper than `max` (strings are skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** Parses JSON text from a client; throws `JsonInputError` for malformed or too deep input. */
export function parseJsonInput(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JsonInputError('syntax', error instanceof Error ? error.message : String(error));
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new JsonInputError('depth', `the JSON nests deeper than ${MAX_JSON_DEPTH} levels`, value);
  }
  return value;
}
