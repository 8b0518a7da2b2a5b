/**
 * Where a client entry's command resolves (src/init/command-path.ts), and the npx spec `init
 * --npx` writes (src/init/server-command.ts):
 * - a name is the first executable file of that name on PATH; an empty PATH entry is the working
 *   directory; a directory or a non-executable file of that name is skipped;
 * - a path resolves against the working directory and must be an executable file; one that does
 *   not exist is said to be missing "on this machine";
 * - `missingPath` says nothing about a name, nor about a path that exists;
 * - the npx spec pins the major version.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isPathCommand, missingPath, resolveCommand } from '../../../src/init/command-path.js';
import { npxSpec } from '../../../src/init/server-command.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await makeTempDir('majordomus-command-path-');
  cleanups.push(dir.cleanup);
  return dir.path;
}

describe('resolveCommand', () => {
  it('finds a name on PATH, skipping a directory and a non-executable file of that name', async () => {
    const root = await scratch();
    for (const dir of ['a', 'b', 'c']) await mkdir(join(root, dir));
    await mkdir(join(root, 'a/majordomus'));
    await writeFile(join(root, 'b/majordomus'), 'not executable');
    await writeFile(join(root, 'c/majordomus'), '#!/bin/sh\n', { mode: 0o755 });
    const path = ['a', 'b', 'c'].map((dir) => join(root, dir)).join(':');
    expect(await resolveCommand('majordomus', root, path)).toEqual({ found: true, path: join(root, 'c/majordomus') });
    expect(await resolveCommand('majordomus', root, join(root, 'a'))).toEqual({ found: false, why: 'majordomus is not on PATH' });
    expect(await resolveCommand('majordomus', root, undefined)).toEqual({ found: false, why: 'majordomus is not on PATH' });
  });

  it('takes an empty PATH entry as the working directory', async () => {
    const root = await scratch();
    await writeFile(join(root, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    expect(await resolveCommand('tool', root, ':/nonexistent')).toEqual({ found: true, path: join(root, 'tool') });
  });

  it('resolves a path against the working directory; a missing one is missing on this machine', async () => {
    const root = await scratch();
    await mkdir(join(root, 'bin'));
    await writeFile(join(root, 'bin/launcher'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(join(root, 'bin/plain'), 'x');
    await chmod(join(root, 'bin/plain'), 0o644);
    expect(await resolveCommand('bin/launcher', root, '')).toEqual({ found: true, path: join(root, 'bin/launcher') });
    expect(await resolveCommand('bin/plain', root, '')).toEqual({ found: false, why: `bin/plain (relative to ${root}) is not an executable file` });
    expect(await resolveCommand('/opt/elsewhere/majordomus-mcp', root, '')).toEqual({ found: false, why: '/opt/elsewhere/majordomus-mcp does not exist on this machine' });
  });

  it('missingPath speaks only of a path that does not resolve', async () => {
    const root = await scratch();
    expect(isPathCommand('majordomus')).toBe(false);
    expect(isPathCommand('./majordomus')).toBe(true);
    expect(await missingPath('majordomus', root)).toBeNull();
    expect(await missingPath('/bin/sh', root)).toBeNull();
    expect(await missingPath('/opt/gone/majordomus-mcp', root)).toBe('/opt/gone/majordomus-mcp does not exist on this machine');
  });
});

describe('npxSpec', () => {
  it('pins the major version', () => {
    expect(npxSpec('0.1.0')).toBe('majordomus@0');
    expect(npxSpec('3.12.4-beta.1')).toBe('majordomus@3');
    expect(() => npxSpec('latest')).toThrow(/not semver/);
  });
});
