/**
 * Merging `[mcp_servers.majordomus]` into a TOML file as text (src/init/toml-config.ts). Covers:
 * - appended at the end, separated by one blank line, everything before byte for byte (comments,
 *   other tables, a missing final newline, CRLF endings); an empty file gets just the table;
 * - an equal table (any layout: a quoted header, dotted keys) is unchanged;
 * - a differing one is a conflict that changes nothing; with force, its block (with sub-tables,
 *   without the comments above the next table) is replaced and the rest stays;
 * - refusals: not TOML (the parser's first line), a table that is not written as a `[table]`
 *   block (dotted keys) when it must be replaced, and an edit that would not give the intended
 *   document (an inline `mcp_servers`);
 * - values are rendered as TOML (quoted strings, arrays, numbers, booleans).
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { MajordomusError } from '../../../src/platform/errors.js';
import { mergeTomlTable, renderTomlTable } from '../../../src/init/toml-config.js';

const ENTRY = { command: '/abs/bin/majordomus-mcp', args: [], startup_timeout_sec: 120, required: true };
const PATH = ['mcp_servers', 'majordomus'] as const;
const TABLE = '[mcp_servers.majordomus]\ncommand = "/abs/bin/majordomus-mcp"\nargs = []\nstartup_timeout_sec = 120\nrequired = true\n';

function merge(text: string, force = false) {
  return mergeTomlTable('c.toml', text, PATH, ENTRY, force);
}

function refusal(run: () => unknown): MajordomusError {
  try {
    run();
  } catch (error) {
    if (error instanceof MajordomusError) return error;
    throw error;
  }
  throw new Error('no refusal');
}

describe('renderTomlTable', () => {
  it('renders strings quoted, arrays, numbers and booleans, and quotes keys that need it', () => {
    expect(renderTomlTable(PATH, ENTRY)).toBe(TABLE);
    expect(renderTomlTable(['a b', 'c'], { 'x.y': ['1', '"2"'] })).toBe('["a b".c]\n"x.y" = ["1", "\\"2\\""]\n');
  });
});

describe('mergeTomlTable', () => {
  it('appends the table after everything else, byte for byte', () => {
    const text = '# settings\nmodel = "o3" # mine\n\n[mcp_servers.other]\ncommand = "x"\n';
    expect(merge(text)).toEqual({ text: `${text}\n${TABLE}`, conflict: null });
    expect(merge('model = "o3"').text).toBe(`model = "o3"\n\n${TABLE}`);
    expect(merge('').text).toBe(TABLE);
    expect(merge('a = 1\n\n').text).toBe(`a = 1\n\n${TABLE}`);
    expect(merge('a = 1\r\n').text).toBe(`a = 1\r\n\r\n${TABLE.replaceAll('\n', '\r\n')}`);
  });

  it('leaves an equal table alone, however it is written', () => {
    for (const text of [
      `# mine\n${TABLE}`,
      '[mcp_servers."majordomus"]\nrequired = true\nargs = [ ]\ncommand = \'/abs/bin/majordomus-mcp\'\nstartup_timeout_sec = 120\n',
      '[mcp_servers]\nmajordomus.command = "/abs/bin/majordomus-mcp"\nmajordomus.args = []\nmajordomus.startup_timeout_sec = 120\nmajordomus.required = true\n',
    ]) {
      expect(merge(text)).toEqual({ text, conflict: null });
    }
  });

  it('reports a differing table as a conflict; with force replaces its block and sub-tables only', () => {
    const text = '# top\n[mcp_servers.majordomus]\ncommand = "old"\n[mcp_servers.majordomus.env]\nA = "1"\n\n# about b\n[b]\nx = 1\n';
    const refused = merge(text);
    expect(refused).toEqual({ text, conflict: '[mcp_servers.majordomus] is already {"command":"old","env":{"A":"1"}}', existing: { command: 'old', env: { A: '1' } } });
    const forced = merge(text, true);
    expect(forced.conflict).toBe(refused.conflict);
    expect(forced.text).toBe(`# top\n${TABLE}\n# about b\n[b]\nx = 1\n`);
    expect(parse(forced.text)).toEqual({ mcp_servers: { majordomus: ENTRY }, b: { x: 1 } });
  });

  it('refuses what it cannot edit safely, naming the file', () => {
    const broken = refusal(() => merge('[mcp_servers\n'));
    expect(broken.code).toBe('MAJ_CONFIG_UNPARSABLE');
    expect(broken.message).toMatch(/^c\.toml: not valid TOML: /);
    const dotted = refusal(() => merge('[mcp_servers]\nmajordomus.command = "old"\n', true));
    expect(dotted.message).toContain('c.toml: [mcp_servers.majordomus] is not written as a table of its own');
    const inline = refusal(() => merge('mcp_servers = { a = { command = "x" } }\n'));
    expect(inline.message).toContain('c.toml: adding [mcp_servers.majordomus] as text would not give the intended document');
  });
});
