/**
 * What the layer watcher reports (src/layer/watch.ts): edits anywhere under `.ai/`, in directories
 * created after it started too, never anything under the local half; git's index and HEAD of the
 * work tree, a linked worktree's own included.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitWatchFiles, layerTrees, LayerWatcher } from '../../../src/layer/watch.js';
import { createFixtureRepo, git, type FixtureRepo } from '../../helpers/fixture-repo.js';
import { waitFor } from '../../helpers/wait.js';

describe('LayerWatcher', () => {
  let repo: FixtureRepo | null = null;
  let watcher: LayerWatcher | null = null;
  afterEach(async () => {
    watcher?.close();
    watcher = null;
    await repo?.cleanup();
    repo = null;
  });

  async function watched(files: Record<string, string>, withGit = false): Promise<{ root: string; seen: string[] }> {
    repo = await createFixtureRepo({ files: { '.ai/local/state/lease.json': '{}', ...files } });
    const seen: string[] = [];
    const root = repo.root;
    watcher = await LayerWatcher.start(
      { root, trees: layerTrees('.ai/repo'), localPath: '.ai/local', files: withGit ? await gitWatchFiles(root) : [] },
      (path) => seen.push(path),
    );
    return { root, seen };
  }

  it('reports an edit under .ai/ and never a write under the local half, even one made before it', async () => {
    const { root, seen } = await watched({ '.ai/repo/rules/a.md': '# A\n' });
    await writeFile(join(root, '.ai/local/state/lease.json'), '{"changed": true}');
    await mkdir(join(root, '.ai/local/state/harness/s1'), { recursive: true });
    await writeFile(join(root, '.ai/local/state/harness/s1/transcript.jsonl'), '{}\n');
    await writeFile(join(root, '.ai/repo/rules/a.md'), '# A, edited\n');
    await waitFor(() => seen.includes('.ai/repo/rules/a.md'), { what: 'the rule edit to be reported' });
    expect(seen.filter((path) => path.startsWith('.ai/local'))).toEqual([]);
  });

  it('watches a directory created after it started', async () => {
    const { root, seen } = await watched({ '.ai/repo/rules/a.md': '# A\n' });
    await mkdir(join(root, '.ai/repo/knowledge/new'), { recursive: true });
    await waitFor(() => watcher?.directories === 5, { what: 'the new directories to be watched' });
    await writeFile(join(root, '.ai/repo/knowledge/new/doc.md'), '# Doc\n');
    await waitFor(() => seen.includes('.ai/repo/knowledge/new/doc.md'), { what: 'the file in the new directory to be reported' });
  });

  it('reports git add through the index', async () => {
    const { root, seen } = await watched({ '.ai/repo/rules/a.md': '# A\n' }, true);
    await writeFile(join(root, 'unrelated.txt'), 'x\n');
    await git(root, ['add', 'unrelated.txt']);
    await waitFor(() => seen.includes('.git/index'), { what: 'the index change to be reported' });
  });
});

describe('gitWatchFiles', () => {
  let repo: FixtureRepo | null = null;
  afterEach(async () => {
    await repo?.cleanup();
    repo = null;
  });

  it("names a work tree's index and HEAD, and a linked worktree's own", async () => {
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/a.md': '# A\n' } });
    expect(await gitWatchFiles(repo.root)).toEqual([join(repo.root, '.git/index'), join(repo.root, '.git/HEAD')]);
    const linked = join(repo.root, 'linked');
    await git(repo.root, ['worktree', 'add', '-q', linked]);
    expect(await gitWatchFiles(linked)).toEqual([join(repo.root, '.git/worktrees/linked/index'), join(repo.root, '.git/worktrees/linked/HEAD')]);
  });

  it('names nothing outside a git work tree', async () => {
    repo = await createFixtureRepo({ git: false });
    expect(await gitWatchFiles(repo.root)).toEqual([]);
  });
});

describe('layerTrees', () => {
  it('watches .ai/ alone when the repo half is inside it, else the repo half too', () => {
    expect(layerTrees('.ai/repo')).toEqual(['.ai']);
    expect(layerTrees('docs/ai')).toEqual(['.ai', 'docs/ai']);
  });
});
