/**
 * Writing a JSON-RPC frame. A tool's output arrives as JSON text (from the pool, or serialized
 * once in this thread); a successful tool call's result carries that text twice — as the text
 * content, escaped, and as `structuredContent`, as it is. `ToolResult` holds the text, and
 * `frameText` writes the frame of such a result by concatenation, never parsing the output back
 * into objects to serialize it again. The bytes equal `JSON.stringify` of the parsed value, so
 * every transport writes the same frame.
 */

/**
 * A successful `tools/call` result whose output is the JSON text `json`; `meta` is its `_meta`
 * (`tasks/result` names the task the result belongs to).
 */
export class ToolResult {
  readonly json: string;
  readonly meta: Record<string, unknown> | undefined;
  constructor(json: string, meta?: Record<string, unknown>) {
    this.json = json;
    this.meta = meta;
  }
  /** Serialized anywhere but in a frame (a log line, a test), it is the result as MCP spells it. */
  toJSON(): unknown {
    return { content: [{ type: 'text', text: this.json }], structuredContent: JSON.parse(this.json) as unknown, ...(this.meta === undefined ? {} : { _meta: this.meta }) };
  }
}

function isToolResultResponse(value: unknown): value is { jsonrpc: '2.0'; id: string | number; result: ToolResult } {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  return keys.length === 3 && keys[0] === 'jsonrpc' && keys[1] === 'id' && keys[2] === 'result' && (value as { result: unknown }).result instanceof ToolResult;
}

/** The frame's text: `JSON.stringify`, with a tool result's output written as the text it came as. */
export function frameText(value: unknown): string {
  if (!isToolResultResponse(value)) return JSON.stringify(value);
  const { json, meta } = value.result;
  const tail = meta === undefined ? '' : `,"_meta":${JSON.stringify(meta)}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(value.id)},"result":{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}${tail}}}`;
}
