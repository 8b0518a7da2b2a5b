/**
 * verifyLocalHalf, the check made before anything is written below `local.path`:
 * - an absent local half, or one with untracked (ignored) files, passes;
 * - a link at the local half, or at any directory on the way to it, is refused naming the link;
 * - a regular file on the way is refused as not a directory;
 * - a file git tracks below the local half is refused naming it; outside a git work tree there is
 *   nothing tracked and nothing to refuse;
 * - the check itself creates nothing.
 */
import { mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { verifyLocalHalf } from '../../../src/layer/local-half.js';
import { Fixtures, git, gitTrack, put } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

async function refusal(root: string, localPath: string): Promise<MajordomusError> {
  const error = await verifyLocalHalf(root, localPath).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MajordomusError);
  expect((error as MajordomusError).code).toBe('MAJ_MANIFEST_INVALID');
  expect((error as MajordomusError).message).toContain(join(root, '.ai', 'manifest.yaml'));
  return error as MajordomusError;
}

describe('verifyLocalHalf', () => {
  it('passes an absent local half and creates nothing', async () => {
    const root = await fixtures.tree({});
    await expect(verifyLocalHalf(root, '.ai/local')).resolves.toBeUndefined();
    expect(await readdir(join(root, '.ai'))).toEqual(['manifest.yaml']);
  });

  it('passes a local half holding only untracked files in a git work tree', async () => {
    const root = await fixtures.tree({ '.gitignore': '.ai/local/\n', '.ai/local/state/mcp/server.json': '{}\n' });
    gitTrack(root);
    await expect(verifyLocalHalf(root, '.ai/local')).resolves.toBeUndefined();
  });

  it('refuses a local half that is a symbolic link, naming it and its target', async () => {
    const root = await fixtures.tree({});
    const elsewhere = await fixtures.dir();
    await symlink(elsewhere, join(root, '.ai', 'local'));
    const error = await refusal(root, '.ai/local');
    expect(error.message).toContain(`local.path: .ai/local is a symbolic link to ${elsewhere}`);
  });

  it('refuses a link on the way to the local half, even when the rest does not exist yet', async () => {
    const root = await fixtures.dir();
    const elsewhere = await fixtures.dir();
    await symlink(elsewhere, join(root, 'var'));
    const error = await refusal(root, 'var/majordomus/local');
    expect(error.message).toContain('local.path: var is a symbolic link');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('lets a regular file on the way to the local half pass: nothing can be written there, so the client is served alone', async () => {
    const root = await fixtures.tree({ '.ai/local': 'not a directory\n' });
    await expect(verifyLocalHalf(root, '.ai/local/state')).resolves.toBeUndefined();
  });

  it('refuses a local half holding a tracked file, naming the file', async () => {
    const root = await fixtures.tree({ '.ai/state/keep.md': 'tracked\n', '.ai/state/other.md': 'tracked\n' });
    gitTrack(root);
    git(root, 'commit', '-q', '-m', 'fixture');
    const error = await refusal(root, '.ai/state');
    expect(error.message).toContain('local.path: .ai/state/keep.md is tracked by git');
  });

  it('refuses a staged file too, and finds it from a root below the top of the work tree', async () => {
    const top = await fixtures.dir();
    const root = join(top, 'packages', 'app');
    await put(root, '.ai/local/staged.json', '{}\n');
    gitTrack(top);
    const error = await refusal(root, '.ai/local');
    expect(error.message).toContain('.ai/local/staged.json is tracked by git');
  });

  it('checks nothing with git outside a git work tree', async () => {
    const root = await fixtures.tree({ '.ai/local/state/file': 'x\n' });
    await mkdir(join(root, '.ai', 'local', 'more'));
    await expect(verifyLocalHalf(root, '.ai/local')).resolves.toBeUndefined();
  });
});
