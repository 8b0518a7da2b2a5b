/**
 * read_file: numbered lines a window at a time, long lines cut, the file marked as read; every
 * path outside the checkout, through a symlink out of it, or protected by the floor refused.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_LINE_CAP } from '../../../src/executor/tools/read-file.js';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

let box: Toolbox;

beforeEach(async () => {
  box = await createToolbox({
    files: {
      'notes.txt': Array.from({ length: 2500 }, (_, index) => `line ${index + 1}`).join('\n') + '\n',
      'src/wide.txt': `${'w'.repeat(READ_LINE_CAP + 50)}\nshort\n`,
      'src/empty.txt': '',
      'src/copy.txt': 'the value is abc123secretvalue here\n',
      '.env': 'SECRET=abc123secretvalue\n',
      '.env.example': 'SECRET=\n',
      'private/plan.md': 'plan\n',
    },
    symlinks: { 'out-link': '/etc/hostname', 'etc-link': '/etc', 'sneaky.txt': '.env', 'src/up': '..' },
    deny: ['private/**'],
  });
});

afterEach(async () => {
  await box.cleanup();
});

describe('read_file', () => {
  it('answers numbered lines, 2000 by default, and says how to read on', async () => {
    const outcome = await box.run('read_file', { path: 'notes.txt' });
    expect(outcome.ok).toBe(true);
    const lines = outcome.output.split('\n');
    expect(lines[0]).toBe('     1\tline 1');
    expect(lines[1999]).toBe('  2000\tline 2000');
    expect(lines[2000]).toBe('(lines 1-2000 of 2500; offset=2001 reads on)');
    expect(box.context.readFiles.has(`${box.root}/notes.txt`)).toBe(true);
  });

  it('reads a window from offset (1-based) for limit lines', async () => {
    const outcome = await box.run('read_file', { path: 'notes.txt', offset: 2499, limit: 10 });
    expect(outcome).toEqual({ ok: true, output: '  2499\tline 2499\n  2500\tline 2500' });
  });

  it('cuts a long line and says so', async () => {
    const outcome = await box.run('read_file', { path: 'src/wide.txt' });
    expect(outcome.output).toContain(`${'w'.repeat(READ_LINE_CAP)}… [line cut at ${READ_LINE_CAP} of ${READ_LINE_CAP + 50} characters]`);
    expect(outcome.output).toContain('     2\tshort');
  });

  it('resolves a path against the working directory', async () => {
    const outcome = await box.run('read_file', { path: 'wide.txt', limit: 1 }, { cwd: `${box.root}/src` });
    expect(outcome.ok).toBe(true);
  });

  it('says a file is empty, missing, a directory, or read past its end', async () => {
    expect(await box.run('read_file', { path: 'src/empty.txt' })).toEqual({ ok: true, output: '(src/empty.txt is empty)' });
    expect(await box.run('read_file', { path: 'nope.txt' })).toEqual({ ok: false, output: 'nope.txt does not exist' });
    expect(await box.run('read_file', { path: 'src' })).toEqual({ ok: false, output: 'src is a directory; use glob to list it' });
    expect(await box.run('read_file', { path: 'notes.txt', offset: 3000 })).toEqual({ ok: false, output: 'notes.txt has 2500 lines; offset 3000 is past its end' });
  });

  it('answers a bad input with what is wrong, never a throw', async () => {
    expect(await box.run('read_file', {})).toEqual({ ok: false, output: 'invalid input for read_file: path: Invalid input: expected string, received undefined' });
    expect((await box.run('read_file', { path: 'notes.txt', offset: 0 })).output).toMatch(/^invalid input for read_file: offset: Too small/);
    expect((await box.run('read_file', 'notes.txt')).output).toMatch(/^invalid input for read_file: input: Invalid input: expected object/);
  });

  it('refuses paths outside the checkout, written with .. or absolute', async () => {
    for (const path of ['../outside.txt', '/etc/hostname', 'src/../../x']) {
      const outcome = await box.run('read_file', { path });
      expect(outcome.ok).toBe(false);
      expect(outcome.refused).toBe(`${path} is outside the checkout (${box.root})`);
    }
  });

  it('refuses a symlink that leads out of the checkout, and a path through a linked directory that does', async () => {
    const link = await box.run('read_file', { path: 'out-link' });
    expect(link.refused).toBe('out-link leads outside the checkout through a symbolic link (to /etc/hostname)');
    const through = await box.run('read_file', { path: 'etc-link/hostname' });
    expect(through.refused).toBe('etc-link/hostname leads outside the checkout through a symbolic link (to /etc/hostname)');
  });

  it('follows a symlink that stays inside the checkout', async () => {
    const through = await box.run('read_file', { path: 'src/up/notes.txt', limit: 1 });
    expect(through).toEqual({ ok: true, output: '     1\tline 1\n(lines 1-1 of 2500; offset=2 reads on)' });
  });

  it('refuses protected files by the rule that protects them, a symlink to one included, and never shows their content', async () => {
    const env = await box.run('read_file', { path: '.env' });
    expect(env).toEqual({ ok: false, output: 'refused: .env is protected by the permission floor (.env*)', refused: '.env is protected by the permission floor (.env*)' });
    const sneaky = await box.run('read_file', { path: 'sneaky.txt' });
    expect(sneaky.refused).toBe('sneaky.txt leads to .env, protected by the permission floor (.env*)');
    const denied = await box.run('read_file', { path: 'private/plan.md' });
    expect(denied.refused).toBe("private/plan.md is protected by the policy's deny glob (private/**)");
    expect((await box.run('read_file', { path: '.env.example' })).ok).toBe(true);
  });

  it('redacts a protected value copied into an ordinary file', async () => {
    const outcome = await box.run('read_file', { path: 'src/copy.txt' });
    expect(outcome.output).toBe('     1\tthe value is [redacted: protected content] here');
  });
});
