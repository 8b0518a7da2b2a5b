/**
 * write_file and edit_file: files created with their parents, edits only of files read in this
 * conversation, a unique old_string unless replace_all, a diff in the answer; protected files,
 * paths out of the checkout and .git/ internals refused.
 */
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

let box: Toolbox;

beforeEach(async () => {
  box = await createToolbox({
    files: { 'src/a.ts': 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n', '.env': 'SECRET=abc123secretvalue\n', 'README.md': 'readme\n' },
    symlinks: { 'tmp-link': '/tmp', 'dangling': 'nowhere/file.txt', 'to-env': '.env' },
    deny: ['vendor/**'],
  });
});

afterEach(async () => {
  await box.cleanup();
});

describe('write_file', () => {
  it('creates a file and its parent directories, and counts it as read', async () => {
    const outcome = await box.run('write_file', { path: 'deep/new/dir/file.txt', content: 'hello\n' });
    expect(outcome).toEqual({ ok: true, output: 'created deep/new/dir/file.txt (6 bytes)' });
    expect(await readFile(join(box.root, 'deep/new/dir/file.txt'), 'utf8')).toBe('hello\n');
    expect(box.context.readFiles.has(join(box.root, 'deep/new/dir/file.txt'))).toBe(true);
  });

  it('replaces an existing file whole', async () => {
    expect(await box.run('write_file', { path: 'README.md', content: 'new' })).toEqual({ ok: true, output: 'replaced README.md (3 bytes)' });
    expect(await readFile(join(box.root, 'README.md'), 'utf8')).toBe('new');
  });

  it('refuses protected files, deny globs, paths out of the checkout and .git internals, writing nothing', async () => {
    const cases: [string, string][] = [
      ['.env', '.env is protected by the permission floor (.env*)'],
      ['config/id_rsa', 'config/id_rsa is protected by the permission floor (SSH private key)'],
      ['vendor/lib.js', "vendor/lib.js is protected by the policy's deny glob (vendor/**)"],
      ['to-env', 'to-env leads to .env, protected by the permission floor (.env*)'],
      ['../escape.txt', `../escape.txt is outside the checkout (${box.root})`],
      ['dangling', 'dangling is a symbolic link whose target does not exist'],
      ['.git/hooks/pre-commit', '.git/hooks/pre-commit is inside .git/: repository internals may be read but never written'],
    ];
    for (const [path, reason] of cases) {
      const outcome = await box.run('write_file', { path, content: 'x' });
      expect(outcome).toEqual({ ok: false, output: `refused: ${reason}`, refused: reason });
    }
    const newThroughLink = await box.run('write_file', { path: 'tmp-link/majordomus-escape.txt', content: 'x' });
    expect(newThroughLink.refused).toMatch(/^tmp-link\/majordomus-escape.txt leads outside the checkout through a symbolic link/);
    expect(await readFile(join(box.root, '.env'), 'utf8')).toBe('SECRET=abc123secretvalue\n');
    expect(await readlink(join(box.root, 'dangling'))).toBe('nowhere/file.txt');
    await expect(readFile(join(box.root, 'nowhere/file.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('answers a bad input with what is wrong', async () => {
    expect(await box.run('write_file', { path: 'x.txt' })).toEqual({ ok: false, output: 'invalid input for write_file: content: Invalid input: expected string, received undefined' });
    expect(await box.run('write_file', { path: 'src', content: 'x' })).toEqual({ ok: false, output: 'src is a directory' });
  });
});

describe('edit_file', () => {
  it('refuses a file not read in this conversation', async () => {
    const outcome = await box.run('edit_file', { path: 'src/a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' });
    expect(outcome).toEqual({ ok: false, output: 'src/a.ts has not been read in this conversation: read it with read_file first, then edit it' });
  });

  it('replaces a unique string in a read file and answers the diff', async () => {
    await box.run('read_file', { path: 'src/a.ts' });
    const outcome = await box.run('edit_file', { path: 'src/a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' });
    expect(outcome).toEqual({
      ok: true,
      output: ['edited src/a.ts (1 replacement)', '--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1,3 +1,3 @@', ' const a = 1;', '-const b = 2;', '+const b = 3;', ' const a2 = 1;'].join('\n'),
    });
    expect(await readFile(join(box.root, 'src/a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\nconst a2 = 1;\n');
  });

  it('refuses an old_string that is not unique unless replace_all, then replaces every occurrence', async () => {
    await box.run('read_file', { path: 'src/a.ts' });
    const refused = await box.run('edit_file', { path: 'src/a.ts', old_string: '= 1;', new_string: '= 9;' });
    expect(refused).toEqual({ ok: false, output: 'old_string occurs 2 times in src/a.ts: add surrounding lines to make it unique, or set replace_all' });
    expect(await readFile(join(box.root, 'src/a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
    const all = await box.run('edit_file', { path: 'src/a.ts', old_string: '= 1;', new_string: '= 9;', replace_all: true });
    expect(all.ok).toBe(true);
    expect(all.output.split('\n')[0]).toBe('edited src/a.ts (2 replacements)');
    expect(await readFile(join(box.root, 'src/a.ts'), 'utf8')).toBe('const a = 9;\nconst b = 2;\nconst a2 = 9;\n');
  });

  it('says when old_string is missing or changes nothing, and when the input is bad', async () => {
    await box.run('read_file', { path: 'src/a.ts' });
    expect((await box.run('edit_file', { path: 'src/a.ts', old_string: 'nope', new_string: 'x' })).output).toBe(
      'old_string was not found in src/a.ts; read the file again and copy the text exactly, whitespace included',
    );
    expect((await box.run('edit_file', { path: 'src/a.ts', old_string: 'a', new_string: 'a' })).output).toBe('old_string and new_string are the same: there is nothing to change');
    expect((await box.run('edit_file', { path: 'src/a.ts', old_string: '', new_string: 'x' })).output).toMatch(/^invalid input for edit_file: old_string: Too small/);
  });

  it('refuses a protected file even when asked to edit it blind', async () => {
    const outcome = await box.run('edit_file', { path: '.env', old_string: 'SECRET', new_string: 'X' });
    expect(outcome.refused).toBe('.env is protected by the permission floor (.env*)');
    expect(await readFile(join(box.root, '.env'), 'utf8')).toBe('SECRET=abc123secretvalue\n');
  });
});
