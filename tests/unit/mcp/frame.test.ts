/**
 * Writing frames (src/mcp/frame.ts). Covers:
 * - a tool result's frame is byte for byte JSON.stringify of the result MCP spells (the output as
 *   escaped text content and as structuredContent), for numeric and string ids and outputs with
 *   quotes, newlines and non-ASCII text;
 * - any other frame is plain JSON.stringify (an error, a list, a response with extra keys);
 * - outside a frame a ToolResult serializes as the MCP result it stands for.
 */
import { describe, expect, it } from 'vitest';
import { frameText, ToolResult } from '../../../src/mcp/frame.js';

const expanded = (json: string): unknown => ({ content: [{ type: 'text', text: json }], structuredContent: JSON.parse(json) as unknown });

describe('frameText', () => {
  it.each([
    [7, '{"a":[1,2,{"b":"c"}],"s":"say \\"hi\\"\\nñ ✓"}'],
    ['req-1', '[]'],
    [0, '"just a string"'],
  ])('writes a tool result (id %j) exactly as JSON.stringify of the MCP result', (id, json) => {
    const frame = frameText({ jsonrpc: '2.0', id, result: new ToolResult(json) });
    expect(frame).toBe(JSON.stringify({ jsonrpc: '2.0', id, result: expanded(json) }));
  });

  it('is JSON.stringify for every other frame', () => {
    for (const value of [
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'no' } },
      { jsonrpc: '2.0', id: 1, result: { tools: [] } },
      { jsonrpc: '2.0', id: 1, result: new ToolResult('{}'), extra: true },
    ]) {
      expect(frameText(value)).toBe(JSON.stringify(value));
    }
  });

  it('serializes a ToolResult outside a frame as the result it stands for', () => {
    expect(JSON.stringify({ out: new ToolResult('{"a":1}') })).toBe(JSON.stringify({ out: expanded('{"a":1}') }));
  });
});
