import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROMPT_BYTES, promptOf, redactArgv, resolveCwd } from '../../../src/harness/prepare.js';
import { globMatches } from '../../../src/harness/profiles.js';

let root: string;
let outside: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-prepare-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-outside-')));
  await mkdir(join(root, 'src/a'), { recursive: true });
  await writeFile(join(root, 'task.md'), 'do the thing\n');
  await writeFile(join(root, 'blank.md'), '  \n');
  await writeFile(join(root, 'huge.md'), Buffer.alloc(MAX_PROMPT_BYTES + 1, 0x61));
  await writeFile(join(outside, 'secret.md'), 'secret');
  await symlink(outside, join(root, 'escape'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('the working directory of a turn', () => {
  it('is the root for "" and a directory inside it otherwise', () => {
    expect(resolveCwd(root, '')).toBe(root);
    expect(resolveCwd(root, 'src/a')).toBe(join(root, 'src/a'));
  });

  it.each([
    ['..', /leads outside the checkout/],
    ['src/../../x', /leads outside the checkout/],
    ['/etc', /must be relative/],
    ['escape', /through a symbolic link/],
    ['missing', /does not exist/],
    ['task.md', /is not a directory/],
  ])('refuses %s, naming why', (cwd, why) => {
    expect(() => resolveCwd(root, cwd)).toThrow(why);
  });
});

describe('the prompt of a turn', () => {
  it('is the prompt given, or the file read whole', async () => {
    expect(await promptOf(root, { prompt: 'hello' })).toBe('hello');
    expect(await promptOf(root, { file: 'task.md' })).toBe('do the thing\n');
  });

  it.each([
    [{}, /exactly one of prompt and file/],
    [{ prompt: 'a', file: 'task.md' }, /exactly one of prompt and file/],
    [{ prompt: '   ' }, /blank/],
    [{ file: 'blank.md' }, /is empty/],
    [{ file: 'huge.md' }, /at most 1048576/],
    [{ file: 'escape/secret.md' }, /through a symbolic link/],
    [{ file: '../x' }, /leads outside/],
    [{ file: 'src' }, /not a regular file/],
  ])('refuses %j', async (input, why) => {
    await expect(promptOf(root, input)).rejects.toThrow(why);
  });
});

describe('argv as callers see it', () => {
  it('redacts the values of secret-looking flags in both spellings, and the adapter\'s own', () => {
    expect(redactArgv(['claude', '--api-key', 'sk-1', '--auth-token=abc', '--model', 'm', '-x', 'v', '--secret'], ['-x'])).toEqual([
      'claude',
      '--api-key',
      '[redacted]',
      '--auth-token=[redacted]',
      '--model',
      'm',
      '-x',
      '[redacted]',
      '--secret',
    ]);
  });
});

describe('profile scope globs', () => {
  it('lets * cross / and ? match one character', () => {
    expect(globMatches('team/*', 'team/a/b')).toBe(true);
    expect(globMatches('claude-?', 'claude-1')).toBe(true);
    expect(globMatches('claude-?', 'claude-12')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false);
  });
});
