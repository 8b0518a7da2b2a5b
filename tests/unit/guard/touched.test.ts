/**
 * The paths a commit or a push touches (src/guard/touched.ts), in real temporary git repositories.
 * Covers:
 * - staged additions, modifications and deletions, before and after the first commit;
 * - a staged rename touches both its old and its new path;
 * - `-z` name-status parsing: renames and copies take two paths, a merge's combined status one,
 *   and names with spaces or newlines pass unharmed;
 * - pre-push input: a deleted ref sends nothing, a new ref sends the commits no remote-tracking
 *   ref has, an update sends `<remote>..<local>` (falling back when the remote commit is
 *   unknown here), renames in those commits count both paths, a merge's resolution counts.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitsOf, parseNameStatus, parsePushInput, pathsOfCommits, pushedPaths, stagedPaths } from '../../../src/guard/touched.js';
import { git, makeTempDir } from '../../helpers/fixture-repo.js';

const ZERO = '0'.repeat(40);
const IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false'];

let root: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ path: root, cleanup } = await makeTempDir('majordomus-touched-'));
  await git(root, ['init', '-q', '-b', 'main']);
});

afterEach(async () => {
  await cleanup();
});

async function write(path: string, content = `${path}\n`): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}

async function commit(message: string): Promise<string> {
  await git(root, ['add', '-A']);
  await git(root, [...IDENTITY, 'commit', '-q', '--no-verify', '-m', message]);
  return (await git(root, ['rev-parse', 'HEAD'])).trim();
}

describe('stagedPaths', () => {
  it('lists what the first commit would record, before any commit exists', async () => {
    await write('src/a.ts');
    await write('README.md');
    await git(root, ['add', '-A']);
    expect(await stagedPaths(root)).toEqual(['README.md', 'src/a.ts']);
  });

  it('lists staged additions, modifications and deletions, and nothing unstaged', async () => {
    await write('src/keep.ts');
    await write('src/change.ts');
    await write('src/gone.ts');
    await commit('base');
    await write('src/change.ts', 'changed\n');
    await rm(join(root, 'src/gone.ts'));
    await write('src/new.ts');
    await git(root, ['add', '-A']);
    await write('src/keep.ts', 'changed but not staged\n');
    expect(await stagedPaths(root)).toEqual(['src/change.ts', 'src/gone.ts', 'src/new.ts']);
  });

  it('lists both paths of a staged rename', async () => {
    await write('src/old-name.ts', 'export const value = 1;\n'.repeat(20));
    await commit('base');
    await mkdir(join(root, 'lib'));
    await git(root, ['mv', 'src/old-name.ts', 'lib/new-name.ts']);
    expect(await stagedPaths(root)).toEqual(['lib/new-name.ts', 'src/old-name.ts']);
  });

  it('keeps names with spaces and newlines whole', async () => {
    await write('docs/two words.md');
    await write('docs/line\nbreak.md');
    await git(root, ['add', '-A']);
    expect(await stagedPaths(root)).toEqual(['docs/line\nbreak.md', 'docs/two words.md']);
  });

  it('is empty when nothing is staged', async () => {
    await write('a');
    await commit('base');
    expect(await stagedPaths(root)).toEqual([]);
  });

  it('fails naming git when the directory is not a repository', async () => {
    const outside = await makeTempDir('majordomus-not-git-');
    try {
      await expect(stagedPaths(outside.path)).rejects.toThrow(/git .*diff.* failed/);
    } finally {
      await outside.cleanup();
    }
  });
});

describe('parseNameStatus', () => {
  it('takes two paths for renames and copies and one for everything else', () => {
    const output = ['M', 'a', 'R087', 'old', 'new', 'C100', 'src', 'copy', 'D', 'gone', 'A', 'added', 'MR', 'merged', 'T', 'typed', ''].join('\0');
    expect(parseNameStatus(output)).toEqual(['a', 'old', 'new', 'src', 'copy', 'gone', 'added', 'merged', 'typed']);
  });

  it('is empty for empty output', () => {
    expect(parseNameStatus('')).toEqual([]);
  });
});

describe('parsePushInput', () => {
  it('reads each well-formed line and skips blank or malformed ones', () => {
    const input = `refs/heads/main ${'a'.repeat(40)} refs/heads/main ${'b'.repeat(40)}\n\nnot a line\nrefs/heads/x ${ZERO} refs/heads/x ${'c'.repeat(40)}\n`;
    expect(parsePushInput(input)).toEqual([
      { localRef: 'refs/heads/main', localSha: 'a'.repeat(40), remoteRef: 'refs/heads/main', remoteSha: 'b'.repeat(40) },
      { localRef: 'refs/heads/x', localSha: ZERO, remoteRef: 'refs/heads/x', remoteSha: 'c'.repeat(40) },
    ]);
  });
});

describe('pushed paths', () => {
  let remote: Awaited<ReturnType<typeof makeTempDir>>;

  beforeEach(async () => {
    remote = await makeTempDir('majordomus-remote-');
    await git(remote.path, ['init', '-q', '--bare']);
    await git(root, ['remote', 'add', 'origin', remote.path]);
  });

  afterEach(async () => {
    await remote.cleanup();
  });

  it('sends nothing for a deleted ref', async () => {
    await write('a');
    const head = await commit('one');
    expect(await commitsOf(root, { localRef: '(delete)', localSha: ZERO, remoteRef: 'refs/heads/main', remoteSha: head })).toEqual([]);
  });

  it('sends every commit no remote-tracking ref has for a new remote ref', async () => {
    await write('base.txt');
    const base = await commit('base');
    await git(root, ['push', '-q', 'origin', 'main']);
    await git(root, ['fetch', '-q', 'origin']);
    await git(root, ['checkout', '-q', '-b', 'feature']);
    await write('src/feature.ts');
    const first = await commit('feature');
    await write('src/more.ts');
    const second = await commit('more');
    const commits = await commitsOf(root, { localRef: 'refs/heads/feature', localSha: second, remoteRef: 'refs/heads/feature', remoteSha: ZERO });
    expect(commits.sort()).toEqual([first, second].sort());
    expect(commits).not.toContain(base);
    const input = `refs/heads/feature ${second} refs/heads/feature ${ZERO}\n`;
    expect(await pushedPaths(root, input)).toEqual(['src/feature.ts', 'src/more.ts']);
  });

  it('sends <remote>..<local> for an update, with both paths of a rename in it', async () => {
    await write('src/parser.ts', 'export function parse() { return 1; }\n'.repeat(20));
    await write('docs/x.md');
    const pushed = await commit('base');
    await git(root, ['mv', 'src/parser.ts', 'src/reader.ts']);
    await commit('rename');
    await write('docs/y.md');
    const head = await commit('docs');
    const input = `refs/heads/main ${head} refs/heads/main ${pushed}\n`;
    expect(await pushedPaths(root, input)).toEqual(['docs/y.md', 'src/parser.ts', 'src/reader.ts']);
  });

  it('falls back to the commits no remote has when the remote commit is unknown here', async () => {
    await write('a.txt');
    const head = await commit('one');
    const unknown = 'f'.repeat(40);
    expect(await commitsOf(root, { localRef: 'refs/heads/main', localSha: head, remoteRef: 'refs/heads/main', remoteSha: unknown })).toEqual([head]);
  });

  it('counts what a merge resolution changed beyond both parents', async () => {
    await write('shared.txt', 'base\n');
    const base = await commit('base');
    await git(root, ['checkout', '-q', '-b', 'side']);
    await write('shared.txt', 'side\n');
    await commit('side');
    await git(root, ['checkout', '-q', 'main']);
    await write('shared.txt', 'main\n');
    await commit('main');
    await git(root, [...IDENTITY, 'merge', '-q', 'side', '-m', 'merge']).catch(() => undefined); // conflicts
    await write('shared.txt', 'resolved\n');
    await write('extra-in-merge.txt');
    const merge = await commit('resolved');
    expect(await pathsOfCommits(root, [merge])).toEqual(['extra-in-merge.txt', 'shared.txt']);
    expect(await pathsOfCommits(root, [base])).toEqual(['shared.txt']);
  });

  it('lists nothing for no commits', async () => {
    expect(await pathsOfCommits(root, [])).toEqual([]);
  });
});
