/**
 * Discovery modes:
 * - vcs serves only files git tracks (staged counts as tracked);
 * - filesystem walks the repo half and skips `.git` and the local half;
 * - the local half is never served, even when tracked;
 * - vcs outside a git work tree → MAJ_GIT_UNAVAILABLE (exit 13) carrying git's stderr;
 * - nothing is written by either mode.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { discover } from '../../../src/layer/discovery.js';
import { buildIndex, loadLayer, readManifest } from '../../../src/layer/load.js';
import type { DiscoveryMode } from '../../../src/layer/types.js';
import { Fixtures, git, gitTrack, MANIFEST, put } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

async function uris(root: string, mode: DiscoveryMode): Promise<string[]> {
  const index = await buildIndex(root, await readManifest(join(root, '.ai', 'manifest.yaml')), mode);
  return index.objects.map((object) => object.uri);
}

/** Every path below `root` with its size and mtime, to prove nothing was written. */
async function listing(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true });
  const lines = await Promise.all(
    entries.map(async (entry) => {
      const info = await stat(join(root, entry)).catch(() => undefined);
      return `${entry} ${info?.size ?? '-'} ${info?.mtimeMs ?? '-'}`;
    }),
  );
  return lines.sort();
}

describe('discovery', () => {
  it('serves only tracked files in vcs mode', async () => {
    const root = await fixtures.tree({
      '.ai/repo/rules/tracked.md': '# Tracked\n',
      '.ai/repo/rules/untracked.md': '# Untracked\n',
    });
    gitTrack(root, '.ai/manifest.yaml', '.ai/repo/rules/tracked.md');
    expect(await uris(root, 'vcs')).toEqual(['majordomus://rule/tracked']);
    expect(await uris(root, 'filesystem')).toEqual(['majordomus://rule/tracked', 'majordomus://rule/untracked']);
  });

  it('finds the layer of a root that is a subdirectory of the git work tree', async () => {
    const top = await fixtures.dir();
    const root = join(top, 'packages', 'app');
    await put(root, '.ai/manifest.yaml', MANIFEST);
    await put(root, '.ai/repo/adrs/0001-x.md', '# X\n');
    gitTrack(top);
    expect(await uris(root, 'vcs')).toEqual(['majordomus://adr/0001-x']);
  });

  it('skips .git and the local half in filesystem mode', async () => {
    const root = await fixtures.tree({
      '.ai/repo/rules/kept.md': '# Kept\n',
      '.ai/repo/rules/.git/hidden.md': '# In a .git directory\n',
      '.ai/local/rules/secret.md': '# In the local half\n',
    });
    expect(await uris(root, 'filesystem')).toEqual(['majordomus://rule/kept']);
    // The manifest refuses a local half inside the repo half; discovery leaves it out regardless.
    await put(root, '.ai/repo/local/rules/secret.md', '# In the local half\n');
    const found = await discover({ root, repoPath: '.ai/repo', localPath: '.ai/repo/local', mode: 'filesystem' });
    expect(found.paths).toEqual(['.ai/repo/rules/kept.md']);
  });

  it('never serves the local half, even when its files are tracked and it lies inside the repo half', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/kept.md': '# Kept\n', '.ai/repo/local/rules/forced.md': '# Forced\n' });
    gitTrack(root);
    // Only a hand-made manifest can say this (the schema refuses it): the index still holds the line.
    const manifest = { ...(await readManifest(join(root, '.ai', 'manifest.yaml'))), localPath: '.ai/repo/local' };
    const index = await buildIndex(root, manifest, 'vcs');
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/kept']);
  });

  it('serves an empty layer when the repo half does not exist', async () => {
    const root = await fixtures.tree({});
    expect(await uris(root, 'filesystem')).toEqual([]);
  });

  it('refuses vcs discovery outside a git work tree with MAJ_GIT_UNAVAILABLE and git’s own words', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n' });
    const error = await loadLayer({ cwd: root, discovery: 'vcs', strict: false }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(MajordomusError);
    expect((error as MajordomusError).code).toBe('MAJ_GIT_UNAVAILABLE');
    expect((error as MajordomusError).exitCode).toBe(13);
    expect((error as MajordomusError).message).toMatch(/not a git repository/i);
  });

  it.each(['vcs', 'filesystem'] as const)('writes nothing anywhere in the checkout (%s)', async (mode) => {
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n', '.ai/repo/profiles/p.yaml': 'id: [\n' });
    gitTrack(root);
    git(root, 'commit', '-q', '-m', 'fixture');
    const before = await listing(root);
    await loadLayer({ cwd: root, discovery: mode, strict: false });
    expect(await listing(root)).toEqual(before);
  });
});
