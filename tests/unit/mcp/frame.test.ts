/**
 * Frames with embedded JSON text:
 * - a RawJson is written as its text, so the frame equals JSON.stringify of the parsed value;
 * - several RawJson in one frame each land in their own place; strings that look like the
 *   placeholder stay as they are; a frame without RawJson is plain JSON.stringify;
 * - outside a frame a RawJson is its value; a frame written inside another keeps both intact.
 */
import { describe, expect, it } from 'vitest';
import { frameText, RawJson } from '../../../src/mcp/frame.js';

describe('frameText', () => {
  it('writes a RawJson as its text, byte for byte what JSON.stringify of the value writes', () => {
    const output = { a: [1, { b: 'quote " nul \u0000 line\n' }], c: null, d: 'é🙂' };
    const json = JSON.stringify(output);
    const frame = frameText({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: json }], structuredContent: new RawJson(json) } });
    expect(frame).toBe(JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: json }], structuredContent: output } }));
  });

  it('puts several RawJson each in its own place and leaves look-alike strings alone', () => {
    const frame = frameText({ x: new RawJson('[1]'), y: '\u0000raw-json-0', z: new RawJson('{"k":2}') });
    expect(JSON.parse(frame)).toEqual({ x: [1], y: '\u0000raw-json-0', z: { k: 2 } });
  });

  it('is JSON.stringify for a frame without RawJson', () => {
    const value = { jsonrpc: '2.0', id: 'a', error: { code: -32700, message: 'Parse error' } };
    expect(frameText(value)).toBe(JSON.stringify(value));
  });

  it('serializes a RawJson outside a frame as its value, and a frame inside a frame on its own', () => {
    expect(JSON.stringify({ out: new RawJson('{"a":1}') })).toBe('{"out":{"a":1}}');
    const inner = { toJSON: () => frameText({ nested: new RawJson('[2]') }) };
    expect(frameText({ first: new RawJson('"x"'), inner, last: new RawJson('3') })).toBe('{"first":"x","inner":"{\\"nested\\":[2]}","last":3}');
  });
});
