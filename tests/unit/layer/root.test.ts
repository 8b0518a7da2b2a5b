/**
 * The root search and the manifest:
 * - the nearest ancestor holding .ai/manifest.yaml is the root, from any nested directory;
 * - no root → MAJ_NO_ROOT naming every directory looked at;
 * - a broken manifest (malformed YAML, unknown key, schema violation, unreadable) stops the search
 *   there with MAJ_MANIFEST_INVALID, even when a valid manifest exists further up;
 * - --repo replaces cwd as the start of the search.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/errors.js';
import { findRoot, loadLayer } from '../../../src/layer/load.js';
import { readManifest } from '../../../src/layer/manifest.js';
import { Fixtures, MANIFEST, put } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

async function refusal(promise: Promise<unknown>): Promise<MajordomusError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MajordomusError);
  return error as MajordomusError;
}

describe('findRoot', () => {
  it('finds the nearest ancestor holding .ai/manifest.yaml from a nested directory', async () => {
    const root = await fixtures.tree({});
    const nested = join(root, 'src', 'deep', 'er');
    await mkdir(nested, { recursive: true });
    await expect(findRoot(nested)).resolves.toEqual({ root, manifestPath: join(root, '.ai', 'manifest.yaml') });
  });

  it('counts the start directory itself as a candidate', async () => {
    const root = await fixtures.tree({});
    await expect(findRoot(root)).resolves.toMatchObject({ root });
  });

  it('prefers the nearest manifest over one further up', async () => {
    const outer = await fixtures.tree({});
    const inner = join(outer, 'packages', 'inner');
    await put(inner, '.ai/manifest.yaml', MANIFEST);
    await mkdir(join(inner, 'lib'), { recursive: true });
    await expect(findRoot(join(inner, 'lib'))).resolves.toMatchObject({ root: inner });
  });

  it('refuses with MAJ_NO_ROOT naming every directory it looked in', async () => {
    const base = await fixtures.dir();
    const start = join(base, 'a', 'b');
    await mkdir(start, { recursive: true });
    const error = await refusal(findRoot(start));
    expect(error.code).toBe('MAJ_NO_ROOT');
    expect(error.exitCode).toBe(12);
    const looked: string[] = [];
    for (let directory = start; ; directory = dirname(directory)) {
      looked.push(directory);
      if (dirname(directory) === directory) break;
    }
    expect(looked).toContain('/');
    for (const directory of looked) expect(error.message).toContain(directory);
    expect(error.message).toContain(`${looked.length} directories`);
  });

  it('refuses with MAJ_NO_ROOT when the start is not a directory', async () => {
    const base = await fixtures.dir();
    const error = await refusal(findRoot(join(base, 'missing')));
    expect(error.code).toBe('MAJ_NO_ROOT');
    expect(error.message).toContain(join(base, 'missing'));
  });
});

describe('the manifest', () => {
  it('stops the search at a malformed manifest even when a valid one exists further up', async () => {
    const outer = await fixtures.tree({});
    const inner = join(outer, 'sub');
    await put(inner, '.ai/manifest.yaml', 'schema: ai-repository/v1\nrepo: [unclosed\n');
    const error = await refusal(loadLayer({ cwd: inner, discovery: 'filesystem', strict: false }));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.exitCode).toBe(10);
    expect(error.message).toContain(join(inner, '.ai', 'manifest.yaml'));
    expect(error.message).toContain('malformed YAML');
  });

  it('refuses an unknown key and names it', async () => {
    const root = await fixtures.tree({}, `${MANIFEST}colour: blue\n`);
    const error = await refusal(loadLayer({ cwd: root, discovery: 'filesystem', strict: false }));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.message).toContain('"colour"');
    expect(error.message).toContain(join(root, '.ai', 'manifest.yaml'));
  });

  it('refuses an unknown key nested in repo', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\nrepo: { path: .ai/repo, branch: main }\n');
    const error = await refusal(loadLayer({ cwd: root, discovery: 'filesystem', strict: false }));
    expect(error.message).toContain('"repo.branch"');
  });

  it('refuses a schema violation: another schema id, an unknown section, a path leaving the root', async () => {
    for (const [text, expected] of [
      ['schema: ai-repository/v2\n', 'schema'],
      [`${MANIFEST}sections: [rule, recipe]\n`, 'sections'],
      ['schema: ai-repository/v1\nrepo: { path: ../elsewhere }\n', 'repo.path'],
      ['schema: ai-repository/v1\nrepo: { path: /abs }\n', 'repo.path'],
      ['- just\n- a list\n', 'mapping'],
      ['', 'mapping'],
    ] as const) {
      const root = await fixtures.tree({}, text);
      const error = await refusal(loadLayer({ cwd: root, discovery: 'filesystem', strict: false }));
      expect(error.code).toBe('MAJ_MANIFEST_INVALID');
      expect(error.message).toContain(expected);
    }
  });

  it('refuses a manifest that cannot be read (a directory at its path) and does not look further up', async () => {
    const outer = await fixtures.tree({});
    const inner = join(outer, 'sub');
    await mkdir(join(inner, '.ai', 'manifest.yaml'), { recursive: true });
    const error = await refusal(loadLayer({ cwd: inner, discovery: 'filesystem', strict: false }));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.message).toContain('cannot read the manifest');
    expect(error.message).toContain('EISDIR');
  });

  it('defaults repo, local and sections when they are omitted', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\n');
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toEqual({
      schema: 'ai-repository/v1',
      repoPath: '.ai/repo',
      localPath: '.ai/local',
      sections: ['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy'],
    });
  });

  it('starts the search at --repo instead of cwd', async () => {
    const elsewhere = await fixtures.dir();
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n' });
    const index = await loadLayer({ cwd: elsewhere, repo: join(root, 'deeper', '..'), discovery: 'filesystem', strict: false });
    expect(index.root).toBe(root);
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/a']);
  });
});
