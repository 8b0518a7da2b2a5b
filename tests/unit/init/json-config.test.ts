/**
 * Merging majordomus's entry into a JSON client configuration (src/init/json-config.ts). Covers:
 * - an added entry is one text insertion: comments (line and block), trailing commas, key order,
 *   tab or 4-space indentation and CRLF line endings of the rest are kept byte for byte;
 * - a comment at the end of the last sibling's line stays on that line;
 * - a missing parent object is created; an empty parent `{}` is filled;
 * - an equal entry is unchanged (the same text); a differing one is a conflict that leaves the
 *   text alone, or, with force, is replaced in place;
 * - refusals name the file: not JSON (with line and column), not an object, a parent of the
 *   wrong type.
 */
import { describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { detectLayout, mergeJsonEntry } from '../../../src/init/json-config.js';

const ENTRY = { command: '/abs/bin/majordomus-mcp', args: [] };
const PATH = ['mcpServers', 'majordomus'] as const;

function merge(text: string, force = false) {
  return mergeJsonEntry('f.json', text, PATH, ENTRY, force);
}

describe('mergeJsonEntry', () => {
  it('inserts after the last sibling, keeping comments, trailing commas and 4-space indentation', () => {
    const text = '{\n    /* block */\n    "mcpServers": {\n        "a": {"command": "x"},\n    },\n}\n';
    const { text: after, conflict } = merge(text);
    expect(conflict).toBeNull();
    expect(after).toBe(
      '{\n    /* block */\n    "mcpServers": {\n        "a": {"command": "x"},\n        "majordomus": {\n            "command": "/abs/bin/majordomus-mcp",\n            "args": []\n        }\n    },\n}\n',
    );
  });

  it('keeps a comment at the end of the last sibling\'s line on that line', () => {
    const text = '{\n  "mcpServers": {\n    "a": 1 // note\n  }\n}\n';
    expect(merge(text).text).toBe('{\n  "mcpServers": {\n    "a": 1, // note\n    "majordomus": {\n      "command": "/abs/bin/majordomus-mcp",\n      "args": []\n    }\n  }\n}\n');
  });

  it('indents with tabs and ends lines with CRLF where the file does', () => {
    const text = '{\r\n\t"mcpServers": {\r\n\t\t"a": 1\r\n\t}\r\n}\r\n';
    expect(detectLayout(text)).toEqual({ unit: '\t', eol: '\r\n' });
    expect(merge(text).text).toBe('{\r\n\t"mcpServers": {\r\n\t\t"a": 1,\r\n\t\t"majordomus": {\r\n\t\t\t"command": "/abs/bin/majordomus-mcp",\r\n\t\t\t"args": []\r\n\t\t}\r\n\t}\r\n}\r\n');
  });

  it('creates the missing parent object, and fills an empty one', () => {
    expect(JSON.parse(merge('{\n  "theme": "dark"\n}\n').text)).toEqual({ theme: 'dark', mcpServers: { majordomus: ENTRY } });
    expect(merge('{\n  "theme": "dark"\n}\n').text.startsWith('{\n  "theme": "dark",\n  "mcpServers": {\n    "majordomus": {\n')).toBe(true);
    expect(merge('{"mcpServers": {}}').text).toBe('{"mcpServers": {\n  "majordomus": {\n    "command": "/abs/bin/majordomus-mcp",\n    "args": []\n  }\n}}');
    expect(JSON.parse(merge('{}').text)).toEqual({ mcpServers: { majordomus: ENTRY } });
  });

  it('leaves an equal entry alone, in any key order or layout', () => {
    const text = '{"mcpServers": {"majordomus": {"args": [], "command": "/abs/bin/majordomus-mcp"}}}';
    expect(merge(text)).toEqual({ text, conflict: null });
  });

  it('reports a differing entry as a conflict and changes nothing; with force replaces it in place', () => {
    const text = '{\n  "mcpServers": {\n    "majordomus": {"command": "elsewhere"}, // theirs\n    "b": 2\n  }\n}\n';
    expect(merge(text)).toEqual({ text, conflict: '"mcpServers.majordomus" is already {"command":"elsewhere"}', existing: { command: 'elsewhere' } });
    const forced = merge(text, true);
    expect(forced.conflict).toBe('"mcpServers.majordomus" is already {"command":"elsewhere"}');
    expect(forced.text).toBe('{\n  "mcpServers": {\n    "majordomus": {\n      "command": "/abs/bin/majordomus-mcp",\n      "args": []\n    }, // theirs\n    "b": 2\n  }\n}\n');
  });

  it.each([
    ['{"a": }', /f\.json: not valid JSON: ValueExpected at line 1, column 7/],
    ['{\n  "a": 1\n  "b": 2\n}', /f\.json: not valid JSON: CommaExpected at line 3, column 3/],
    ['[1]', /f\.json: the top level must be a JSON object/],
    ['', /f\.json: not valid JSON: ValueExpected at line 1, column 1/],
    ['{"mcpServers": "none"}', /f\.json: "mcpServers" must be an object, not string/],
  ])('refuses %j naming the file', (text, message) => {
    let error: unknown;
    try {
      merge(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(MajordomusError);
    expect((error as MajordomusError).code).toBe('MAJ_CONFIG_UNPARSABLE');
    expect((error as MajordomusError).message).toMatch(message);
  });
});
