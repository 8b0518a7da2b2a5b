/**
 * Writing a JSON-RPC frame. A tool's output arrives as JSON text (from the pool, or serialized
 * once in this thread for the tool result's `text`); `RawJson` lets the same text stand as
 * `structuredContent` without parsing it back into objects and serializing it again. The bytes
 * equal `JSON.stringify` of the parsed value, so every transport writes the same frame.
 */
import { randomUUID } from 'node:crypto';

// A NUL-led token no JSON text of ours contains; JSON.stringify writes the NUL as `\u0000`.
const TOKEN = `\u0000raw-json-${randomUUID()}-`;
const ESCAPED_TOKEN = JSON.stringify(TOKEN).slice(1, -1);
const PLACEHOLDER = new RegExp(`"${ESCAPED_TOKEN.replace(/\\/g, '\\\\')}(\\d+)"`, 'g');

/** The texts of the frame being written; null outside `frameText`. */
let capture: string[] | null = null;

/** JSON text that a frame embeds as it is. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toJSON(): unknown {
    // Serialized anywhere but in a frame (a log line, a test), it is simply its value.
    if (capture === null) return JSON.parse(this.text) as unknown;
    capture.push(this.text);
    return `${TOKEN}${capture.length - 1}`;
  }
}

/** The frame's text: `JSON.stringify`, with every `RawJson` written as its own text. */
export function frameText(value: unknown): string {
  const outer = capture;
  const texts: string[] = [];
  capture = texts;
  try {
    const text = JSON.stringify(value);
    return texts.length === 0 ? text : text.replace(PLACEHOLDER, (_match, index: string) => texts[Number(index)] as string);
  } finally {
    capture = outer;
  }
}
