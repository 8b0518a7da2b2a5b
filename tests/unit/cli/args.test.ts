/**
 * The command line parsed at the edge (SPEC §5). Covers:
 * - usage errors (MAJ_USAGE, exit 2) for an unknown command, an unknown option, an option of
 *   another command, a bad --discovery, a blank --repo, and a bad port;
 * - what a valid command line parses to (global options, command options, positionals), frozen;
 * - enumerated options accept only their choices.
 */
import { describe, expect, it } from 'vitest';
import { choiceOption, parseCommandLine, portOption } from '../../../src/cli/args.js';
import { MajordomusError } from '../../../src/platform/errors.js';

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MajordomusError);
    expect((error as MajordomusError).code).toBe('MAJ_USAGE');
    expect((error as MajordomusError).exitCode).toBe(2);
    return (error as MajordomusError).message;
  }
  throw new Error('no usage error was thrown');
}

describe('parseCommandLine', () => {
  it('refuses an unknown command and names it', () => {
    expect(usageMessage(() => parseCommandLine(['frobnicate']))).toContain('unknown command "frobnicate"');
  });

  it('refuses an unknown option and names it', () => {
    expect(usageMessage(() => parseCommandLine(['mcp', '--bogus']))).toContain('--bogus');
    expect(usageMessage(() => parseCommandLine(['--bogus']))).toContain('--bogus');
  });

  it('refuses an option that belongs to another command and names both', () => {
    expect(usageMessage(() => parseCommandLine(['mcp', '--port', '8080']))).toContain('--port is not an option of mcp');
    expect(usageMessage(() => parseCommandLine(['serve', '--standalone']))).toContain('--standalone is not an option of serve');
    expect(usageMessage(() => parseCommandLine(['generate', '--format', 'json']))).toContain('--format is not an option of generate');
    expect(usageMessage(() => parseCommandLine(['--check']))).toContain('--check is not an option of majordomus');
  });

  it('refuses a --discovery other than vcs or filesystem', () => {
    expect(usageMessage(() => parseCommandLine(['--discovery', 'svn', 'mcp']))).toContain('--discovery must be vcs or filesystem, not "svn"');
  });

  it('refuses a blank --repo', () => {
    expect(usageMessage(() => parseCommandLine(['--repo', '  ', 'mcp']))).toContain('--repo');
  });

  it('parses global options, command options and positionals, and freezes the result', () => {
    const parsed = parseCommandLine(['--repo', 'x', '--discovery', 'filesystem', '--strict', 'capabilities', 'schema', 'objects.get', '--side', 'output']);
    expect(parsed.command).toBe('capabilities');
    expect(parsed.positionals).toEqual(['schema', 'objects.get']);
    expect(parsed.global).toEqual({ repo: 'x', discovery: 'filesystem', strict: true });
    expect(parsed.options.side).toBe('output');
    expect(Object.isFrozen(parsed)).toBe(true);
    expect(Object.isFrozen(parsed.global)).toBe(true);
  });

  it('defaults to vcs discovery, no strictness and no command', () => {
    const parsed = parseCommandLine([]);
    expect(parsed).toMatchObject({ command: null, help: false, version: false, global: { discovery: 'vcs', strict: false } });
  });

  it('accepts --help and -h on a command', () => {
    expect(parseCommandLine(['serve', '--help'])).toMatchObject({ command: 'serve', help: true });
    expect(parseCommandLine(['-h'])).toMatchObject({ command: null, help: true });
  });
});

describe('portOption', () => {
  it('accepts 0 through 65535 and falls back when absent', () => {
    expect(portOption('0', 'port', 8741)).toBe(0);
    expect(portOption('65535', 'port', 8741)).toBe(65535);
    expect(portOption(undefined, 'port', 8741)).toBe(8741);
  });

  it.each(['65536', '-1', 'abc', '80.5', '', ' 80', '0x50', '1e3'])('refuses the port %j as a usage error naming it', (value) => {
    expect(usageMessage(() => portOption(value, 'http-port', 8741))).toContain(`--http-port must be a port 0–65535, not "${value}"`);
  });
});

describe('choiceOption', () => {
  it('accepts a listed choice, falls back when absent, and refuses anything else', () => {
    const formats = ['text', 'json'] as const;
    expect(choiceOption('json', 'format', formats, 'text')).toBe('json');
    expect(choiceOption(undefined, 'format', formats, 'text')).toBe('text');
    expect(usageMessage(() => choiceOption('yaml', 'format', formats, 'text'))).toContain('--format must be one of text, json, not "yaml"');
    expect(usageMessage(() => choiceOption(true, 'format', formats, 'text'))).toContain('--format');
  });
});
