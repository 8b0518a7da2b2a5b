import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Floor } from '../../../src/floor/rules.js';
import { MAX_PROMPT_BYTES, promptOf, redactArgv, resolveCwd } from '../../../src/harness/prepare.js';
import { globMatches } from '../../../src/harness/profiles.js';

let root: string;
let outside: string;
const floor = new Floor({ localPath: '.ai/local', deny: ['private/**'] });

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-prepare-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-outside-')));
  await mkdir(join(root, 'src/a'), { recursive: true });
  await writeFile(join(root, 'task.md'), 'do the thing\n');
  await writeFile(join(root, 'blank.md'), '  \n');
  await writeFile(join(root, 'huge.md'), Buffer.alloc(MAX_PROMPT_BYTES + 1, 0x61));
  await writeFile(join(outside, 'secret.md'), 'secret');
  await symlink(outside, join(root, 'escape'));
  await writeFile(join(root, '..notes.md'), 'a name that starts with two dots\n');
  await writeFile(join(root, '.env'), 'API_KEY=secret-value\n');
  await mkdir(join(root, '.ai/local/state/mcp'), { recursive: true });
  await writeFile(join(root, '.ai/local/state/mcp/server.json'), '{"token":"t"}');
  await mkdir(join(root, 'private'));
  await writeFile(join(root, 'private/plan.md'), 'plan');
  await symlink('.env', join(root, 'innocent.md'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
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
    ['..notes.md', /is not a directory/],
    ['task.md', /is not a directory/],
  ])('refuses %s, naming why', (cwd, why) => {
    expect(() => resolveCwd(root, cwd)).toThrow(why);
  });
});

describe('the prompt of a turn', () => {
  it('is the prompt given, or the file read whole', async () => {
    expect(await promptOf(root, floor, { prompt: 'hello' })).toBe('hello');
    expect(await promptOf(root, floor, { file: 'task.md' })).toBe('do the thing\n');
    expect(await promptOf(root, floor, { file: '..notes.md' })).toBe('a name that starts with two dots\n');
  });

  it.each([
    [{}, /exactly one of prompt and file/],
    [{ prompt: 'a', file: 'task.md' }, /exactly one of prompt and file/],
    [{ prompt: '   ' }, /blank/],
    [{ file: 'blank.md' }, /is empty/],
    [{ file: 'huge.md' }, /over the 1048576-byte limit/],
    [{ file: 'escape/secret.md' }, /through a symbolic link/],
    [{ file: '../x' }, /leads outside/],
    [{ file: 'src' }, /not a regular file/],
  ])('refuses %j', async (input, why) => {
    await expect(promptOf(root, floor, input)).rejects.toThrow(why);
  });

  it.each([
    ['.env', 'protected_path', /permission floor \(\.env\*\)/],
    ['.ai/local/state/mcp/server.json', 'protected_path', /local half/],
    ['private/plan.md', 'protected_path', /deny glob/],
    ['innocent.md', 'protected_path', /permission floor/],
    ['pipe', 'not_regular_file', /a FIFO/],
    ['escape/secret.md', 'outside_checkout', /through a symbolic link/],
    ['/etc/passwd', 'outside_checkout', /must be relative/],
  ])('refuses %s with %s before reading it', async (file, code, why) => {
    const refusal = await promptOf(root, floor, { file }).then(() => null, (error: unknown) => error);
    expect(refusal).toMatchObject({ code });
    expect((refusal as Error).message).toMatch(why);
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
