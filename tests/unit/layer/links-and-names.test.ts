/**
 * Paths that would lead out of the layer, and names that cannot be named:
 * - RealDirectories: a directory and everything above it must be real directories; the first
 *   link or non-directory on the way is named; each directory is judged once and remembered;
 * - a committed file whose directory (or a directory above it) became a link is left out with a
 *   `symlink` diagnostic naming that directory, even when the link points inside the root;
 * - a link on the way to repo.path empties the layer with one `symlink` diagnostic naming it, in
 *   both discovery modes;
 * - readRegular confirms the file really opened, so a link swapped in above a checked path is refused;
 * - a name that is not UTF-8 is an `invalid_utf8` diagnostic with U+FFFD in its path (vcs and
 *   filesystem), for files and for directories the walk cannot enter; such names that could not
 *   be layer files are ignored like any other stray file.
 */
import { mkdir, open, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIndex, readManifest } from '../../../src/layer/load.js';
import { readRegular, readRegularSync, RealDirectories } from '../../../src/platform/confine.js';
import type { DiscoveryMode, LayerIndex } from '../../../src/layer/types.js';
import { Fixtures, gitTrack, put } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

const MARKER = 'OUTSIDE-ONLY';

async function build(root: string, mode: DiscoveryMode): Promise<LayerIndex> {
  return buildIndex(root, await readManifest(join(root, '.ai', 'manifest.yaml')), mode);
}

function codes(index: LayerIndex): Array<[string, string]> {
  return index.diagnostics.map((diagnostic) => [diagnostic.path, diagnostic.code]);
}

/** A root with a committed file below `dir`, then `dir` replaced by a link to `target`. */
async function committedThenLinked(dir: string, target: (root: string) => Promise<string>, below = 'secret.md'): Promise<string> {
  const root = await fixtures.tree({ '.ai/repo/rules/good.md': '# Good\n', [`${dir}/${below}`]: '# Committed\n' });
  gitTrack(root);
  await rm(join(root, dir), { recursive: true });
  await symlink(await target(root), join(root, dir));
  return root;
}

describe('RealDirectories', () => {
  it('finds a path of real directories real, and the root itself', async () => {
    const root = await fixtures.tree({ 'a/b/c/file': 'x' });
    const directories = new RealDirectories(root);
    expect(await directories.check('a/b/c')).toEqual({ kind: 'real' });
    expect(await directories.check('')).toEqual({ kind: 'real' });
    expect(await directories.parentsOf('a/b/c/file')).toEqual({ kind: 'real' });
  });

  it('names the first link on the way, and a file where a directory should be', async () => {
    const root = await fixtures.tree({ 'a/real/file': 'x', 'a/plain': 'x' });
    await symlink('real', join(root, 'a', 'link'));
    const directories = new RealDirectories(root);
    expect(await directories.check('a/link/deeper/still')).toEqual({ kind: 'symlink', component: 'a/link', target: 'real' });
    expect(await directories.parentsOf('a/plain/file.md')).toEqual({ kind: 'not_directory', component: 'a/plain', what: 'a regular file' });
    expect(await directories.check('a/missing/x')).toEqual({ kind: 'unknown', component: 'a/missing', code: 'ENOENT' });
  });

  it('judges each directory once and remembers it', async () => {
    const root = await fixtures.tree({ 'a/b/file': 'x' });
    const directories = new RealDirectories(root);
    expect(await directories.check('a/b')).toEqual({ kind: 'real' });
    await rename(join(root, 'a'), join(root, 'moved'));
    await symlink('moved', join(root, 'a'));
    // Remembered: the same object answers from its verdicts; a new one looks again.
    expect(await directories.check('a/b')).toEqual({ kind: 'real' });
    expect(await directories.check('a')).toEqual({ kind: 'real' });
    expect(await new RealDirectories(root).check('a/b')).toMatchObject({ kind: 'symlink', component: 'a' });
  });
});

describe('links above a layer file', () => {
  it('leaves out a committed file whose directory became a link to the outside, naming the link', async () => {
    const outside = await fixtures.dir();
    await writeFile(join(outside, 'secret.md'), `# Outside\n\n${MARKER}\n`);
    const root = await committedThenLinked('.ai/repo/knowledge/linkdir', async () => outside);
    const index = await build(root, 'vcs');
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/good']);
    expect(codes(index)).toEqual([['.ai/repo/knowledge/linkdir/secret.md', 'symlink']]);
    expect(index.diagnostics[0]?.message).toContain(`.ai/repo/knowledge/linkdir is a symbolic link to ${outside}`);
    expect(JSON.stringify(index)).not.toContain(MARKER);
  });

  it('names a link further up, even one pointing inside the root', async () => {
    const root = await committedThenLinked('.ai/repo/knowledge', async (at) => {
      await put(at, 'docs/team/secret.md', `# Elsewhere in the checkout\n\n${MARKER}\n`);
      return '../../docs';
    }, 'team/secret.md');
    const index = await build(root, 'vcs');
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/good']);
    expect(codes(index)).toEqual([['.ai/repo/knowledge/team/secret.md', 'symlink']]);
    expect(index.diagnostics[0]?.message).toContain('.ai/repo/knowledge is a symbolic link to ../../docs');
    expect(JSON.stringify(index)).not.toContain(MARKER);
  });

  it('reports a file where a directory of a committed path was', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/good.md': '# Good\n', '.ai/repo/rules/team/a.md': '# A\n' });
    gitTrack(root);
    await rm(join(root, '.ai/repo/rules/team'), { recursive: true });
    await writeFile(join(root, '.ai/repo/rules/team'), 'now a file\n');
    const index = await build(root, 'vcs');
    expect(codes(index)).toEqual([['.ai/repo/rules/team/a.md', 'unreadable']]);
    expect(index.diagnostics[0]?.message).toContain('.ai/repo/rules/team is a regular file, not a directory');
  });

  it.each(['vcs', 'filesystem'] as const)('empties the layer when a link leads to repo.path, naming the link (%s)', async (mode) => {
    const outside = await fixtures.dir();
    await put(outside, 'repo/rules/escaped.md', `# Escaped\n\n${MARKER}\n`);
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\nrepo: { path: sub/repo }\n');
    await symlink(outside, join(root, 'sub'));
    gitTrack(root);
    const index = await build(root, mode);
    expect(index.state).toBe('degraded');
    expect(index.objects).toEqual([]);
    expect(codes(index)).toEqual([['sub', 'symlink']]);
    expect(index.diagnostics[0]?.message).toContain('a directory on the way to the repo half sub/repo, is a symbolic link');
    expect(JSON.stringify(index)).not.toContain(MARKER);
  });
});

describe('readRegular', () => {
  it.runIf(process.platform === 'linux')('refuses a file reached through a directory that is a link: the kernel names another file than the path', async () => {
    const root = await fixtures.tree({ 'real/file.md': 'x' });
    const outside = await fixtures.tree({ 'file.md': 'outside' }, null);
    await symlink(outside, join(root, 'linked'));
    // O_NOFOLLOW guards the last component only: the open through `linked` succeeds, and the
    // check of what was opened refuses it.
    expect(await readRegular(join(root, 'real', 'file.md'), 1024)).toMatchObject({ ok: true });
    expect(await readRegular(join(root, 'linked', 'file.md'), 1024, { parentsReal: true })).toMatchObject({ ok: false, reason: 'symlink' });
    expect(readRegularSync(join(root, 'linked', 'file.md'), 1024, { parentsReal: true })).toMatchObject({ ok: false, reason: 'symlink' });
  });
});

describe('names that are not UTF-8', () => {
  /** `base` + the byte 0xE9 (Latin-1 é, not UTF-8) + `rest`, as a path below `root`. */
  function latin1(root: string, base: string, rest: string): Buffer {
    return Buffer.concat([Buffer.from(join(root, base)), Buffer.from([0xe9]), Buffer.from(rest)]);
  }

  it.each(['vcs', 'filesystem'] as const)('reports a rule whose name is not UTF-8 as invalid_utf8 with U+FFFD in its path (%s)', async (mode) => {
    const root = await fixtures.tree({ '.ai/repo/rules/good.md': '# Good\n' });
    await writeFile(latin1(root, '.ai/repo/rules/caf', '.md'), '# Café\n');
    gitTrack(root);
    const index = await build(root, mode);
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/good']);
    expect(codes(index)).toEqual([['.ai/repo/rules/caf\uFFFD.md', 'invalid_utf8']]);
    expect(index.diagnostics[0]?.message).toMatch(/^the name is not valid UTF-8/);
  });

  it('reports a directory the walk cannot enter once, and each committed file below it under vcs', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/good.md': '# Good\n' });
    const dir = latin1(root, '.ai/repo/knowledge/caf', '');
    await mkdir(dir, { recursive: true });
    await writeFile(Buffer.concat([dir, Buffer.from('/a.md')]), '# A\n');
    await writeFile(Buffer.concat([dir, Buffer.from('/b.md')]), '# B\n');
    gitTrack(root);
    const walked = await build(root, 'filesystem');
    expect(codes(walked)).toEqual([['.ai/repo/knowledge/caf\uFFFD', 'invalid_utf8']]);
    expect(walked.diagnostics[0]?.message).toMatch(/^the directory name is not valid UTF-8.*nothing below it is served$/);
    const tracked = await build(root, 'vcs');
    expect(codes(tracked)).toEqual([
      ['.ai/repo/knowledge/caf\uFFFD/a.md', 'invalid_utf8'],
      ['.ai/repo/knowledge/caf\uFFFD/b.md', 'invalid_utf8'],
    ]);
  });

  it.each(['vcs', 'filesystem'] as const)('ignores such names where no layer file could be (%s)', async (mode) => {
    const root = await fixtures.tree({ '.ai/repo/rules/good.md': '# Good\n', '.ai/repo/skills/s/SKILL.md': '---\nname: s\ndescription: S.\n---\n' });
    await writeFile(latin1(root, '.ai/repo/skills/s/notes-', '.txt'), 'x\n');
    await writeFile(latin1(root, '.ai/repo/READ', '.md'), 'x\n');
    gitTrack(root);
    const index = await build(root, mode);
    expect(index.diagnostics).toEqual([]);
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/good', 'majordomus://skill/s']);
  });
});
