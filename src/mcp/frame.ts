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

let embedded: string[] = [];

/** JSON text that a frame embeds as it is. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toJSON(): string {
    embedded.push(this.text);
    return `${TOKEN}${embedded.length - 1}`;
  }
}

/** The frame's text: `JSON.stringify`, with every `RawJson` written as its own text. */
export function frameText(value: unknown): string {
  embedded = [];
  try {
    const text = JSON.stringify(value);
    if (embedded.length === 0) return text;
    const raw = embedded;
    return text.replace(PLACEHOLDER, (_match, index: string) => raw[Number(index)] as string);
  } finally {
    embedded = [];
  }
}
