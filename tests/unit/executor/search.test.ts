/**
 * glob and grep: sorted, capped answers relative to the working directory; protected files left
 * out with a line that says how many; grep never opens them (nor a symlink to one).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GLOB_MAX_RESULTS } from '../../../src/executor/tools/glob.js';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

let box: Toolbox;

beforeEach(async () => {
  box = await createToolbox({
    files: {
      'src/b.ts': 'export const token = process.env.TOKEN;\n',
      'src/a.ts': 'import { b } from "./b";\nconst SECRET_NAME = "SECRET";\n',
      'src/nested/c.ts': 'SECRET here too\n',
      'docs/guide.md': 'mentions SECRET once\n',
      '.github/workflows/ci.yml': 'on: push\n',
      '.env': 'SECRET=abc123secretvalue\n',
      'config/credentials.json': '{"SECRET": "jsontoken12345"}\n',
      'deep/dir/id_ed25519': 'SECRET key material\n',
      'private/notes.md': 'SECRET plan\n',
      'node_modules/pkg/index.js': 'SECRET in a dependency\n',
      'bin/blob.bin': 'SECRET\u0000binary',
    },
    symlinks: { 'src/link-to-env': '../.env' },
    deny: ['private/**'],
  });
});

afterEach(async () => {
  await box.cleanup();
});

describe('glob', () => {
  it('lists matching files sorted, dotfiles included, .git and node_modules not searched', async () => {
    expect(await box.run('glob', { pattern: '**/*.ts' })).toEqual({ ok: true, output: 'src/a.ts\nsrc/b.ts\nsrc/nested/c.ts' });
    expect(await box.run('glob', { pattern: '**/*.yml' })).toEqual({ ok: true, output: '.github/workflows/ci.yml' });
    expect((await box.run('glob', { pattern: '**/*.js' })).output).toBe('no files match **/*.js');
    expect(await box.run('glob', { pattern: '**/*.js', path: 'node_modules' })).toEqual({ ok: true, output: 'node_modules/pkg/index.js' });
  });

  it('matches relative to path and answers relative to the working directory', async () => {
    expect(await box.run('glob', { pattern: '*.ts', path: 'src' })).toEqual({ ok: true, output: 'src/a.ts\nsrc/b.ts' });
    expect(await box.run('glob', { pattern: '**/*.ts' }, { cwd: `${box.root}/src` })).toEqual({ ok: true, output: 'a.ts\nb.ts\nnested/c.ts' });
  });

  it('leaves protected files out and says how many', async () => {
    const outcome = await box.run('glob', { pattern: '**/*' });
    expect(outcome.output).not.toMatch(/\.env|credentials|id_ed25519|private/);
    expect(outcome.output.endsWith('\n(4 protected files were left out: permission floor)')).toBe(true);
    expect(await box.run('glob', { pattern: '.env*' })).toEqual({ ok: true, output: 'no files match .env*\n(1 protected file was left out: permission floor)' });
  });

  it('caps a long list and says how many more there are', async () => {
    await mkdir(join(box.root, 'many'));
    for (let index = 0; index < GLOB_MAX_RESULTS + 5; index++) await writeFile(join(box.root, `many/f${String(index).padStart(4, '0')}.txt`), '');
    const outcome = await box.run('glob', { pattern: 'many/*.txt' });
    const lines = outcome.output.split('\n');
    expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines.at(-1)).toBe('… and 5 more; narrow the pattern');
  });

  it('refuses a pattern that climbs out of path, a path out of the checkout, and bad input', async () => {
    expect((await box.run('glob', { pattern: '../**' })).output).toBe('pattern must be relative to path and stay beneath it: use path to search elsewhere in the checkout');
    expect((await box.run('glob', { pattern: '*', path: '/etc' })).refused).toBe(`/etc is outside the checkout (${box.root})`);
    expect((await box.run('glob', { pattern: '*', path: 'src/a.ts' })).output).toBe('src/a.ts is not a directory');
    expect((await box.run('glob', { pattern: '*', path: 'missing' })).output).toBe('missing does not exist');
    expect((await box.run('glob', { pattern: 3 })).output).toBe('invalid input for glob: pattern: Invalid input: expected string, received number');
  });
});

describe('grep', () => {
  it('answers file:line:text for every match, binary files and dependencies not searched', async () => {
    const outcome = await box.run('grep', { pattern: 'SECRET' });
    expect(outcome.output.split('\n').slice(0, 3)).toEqual(['docs/guide.md:1:mentions SECRET once', 'src/a.ts:2:const SECRET_NAME = "SECRET";', 'src/nested/c.ts:1:SECRET here too']);
  });

  it('never opens a protected file (nor a symlink to one) and says how many it left out', async () => {
    const outcome = await box.run('grep', { pattern: 'SECRET|abc123|jsontoken|key material|plan' });
    expect(outcome.output).not.toMatch(/abc123|jsontoken|key material|plan|\.env|credentials|id_ed25519/);
    expect(outcome.output.endsWith('\n(5 protected files were not searched: permission floor)')).toBe(true);
  });

  it('filters by a glob on the file name, or on the path when the glob has a slash', async () => {
    expect((await box.run('grep', { pattern: 'SECRET', glob: '*.md' })).output).toBe('docs/guide.md:1:mentions SECRET once\n(1 protected file was not searched: permission floor)');
    expect((await box.run('grep', { pattern: 'SECRET', glob: 'src/nested/**' })).output).toBe('src/nested/c.ts:1:SECRET here too');
  });

  it('searches one file when path names one, and refuses a protected one', async () => {
    expect((await box.run('grep', { pattern: 'token', path: 'src/b.ts' })).output).toBe('src/b.ts:1:export const token = process.env.TOKEN;');
    expect((await box.run('grep', { pattern: 'SECRET', path: '.env' })).refused).toBe('.env is protected by the permission floor (.env*)');
  });

  it('stops at max_count and says so', async () => {
    const outcome = await box.run('grep', { pattern: 'SECRET', max_count: 2, path: 'src' });
    expect(outcome.output.split('\n')).toEqual(['src/a.ts:2:const SECRET_NAME = "SECRET";', 'src/nested/c.ts:1:SECRET here too', '(stopped at max_count=2 matching lines)', '(1 protected file was not searched: permission floor)']);
  });

  it('says when nothing matches, and what is wrong with a bad pattern or input', async () => {
    expect((await box.run('grep', { pattern: 'zzz-nothing', path: 'src' })).output).toBe('no matches for /zzz-nothing/ in 3 files\n(1 protected file was not searched: permission floor)');
    expect((await box.run('grep', { pattern: 'zzz-nothing', path: 'docs' })).output).toBe('no matches for /zzz-nothing/ in 1 file');
    expect((await box.run('grep', { pattern: '(' })).output).toMatch(/^invalid regular expression: /);
    expect((await box.run('grep', { pattern: 'x', max_count: 0 })).output).toMatch(/^invalid input for grep: max_count: Too small/);
  });
});
