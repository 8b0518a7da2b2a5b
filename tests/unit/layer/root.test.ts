/**
 * The root search and the manifest:
 * - the nearest ancestor holding .ai/manifest.yaml is the root, from any nested directory;
 * - no root → MAJ_NO_ROOT naming every directory looked at;
 * - the manifest's federation setting (a NATS URL, a repository name) is read and checked;
 * - a broken manifest (malformed YAML, unknown key, schema violation, unreadable) stops the search
 *   there with MAJ_MANIFEST_INVALID, even when a valid manifest exists further up;
 * - the manifest is only ever opened as a regular file: a directory, a FIFO (without blocking), a
 *   symbolic link, a file over 64 KiB or bytes that are not UTF-8 are refusals naming why;
 * - the paths: local.path neither inside nor equal to repo.path, nor containing it; neither half
 *   in .git;
 * - --repo replaces cwd as the start of the search.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
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
    expect(error.message).toContain(join(inner, '.ai', 'manifest.yaml'));
    expect(error.message).toContain('the manifest is a directory, not a regular file');
  });

  it('refuses a FIFO at the manifest path without opening it', async () => {
    const root = await fixtures.tree({}, null);
    await mkdir(join(root, '.ai'));
    execFileSync('mkfifo', [join(root, '.ai', 'manifest.yaml')]);
    // A blocking open of a FIFO without a writer never returns: the test would time out.
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.message).toContain('the manifest is a FIFO, not a regular file');
  });

  it('refuses a manifest that is a symbolic link, even to a valid manifest', async () => {
    const root = await fixtures.tree({ '.ai/real.yaml': MANIFEST }, null);
    await symlink('real.yaml', join(root, '.ai', 'manifest.yaml'));
    const error = await refusal(loadLayer({ cwd: root, discovery: 'filesystem', strict: false }));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.message).toContain('the manifest is a symbolic link');
  });

  it('refuses a manifest over 64 KiB and accepts one of exactly 64 KiB', async () => {
    const exact = `${MANIFEST}#${'x'.repeat(64 * 1024 - MANIFEST.length - 2)}\n`;
    expect(Buffer.byteLength(exact)).toBe(64 * 1024);
    const root = await fixtures.tree({}, exact);
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toMatchObject({ repoPath: '.ai/repo' });
    await writeFile(join(root, '.ai', 'manifest.yaml'), `${exact}#\n`);
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.message).toContain('over the 65536-byte (64 KiB) limit');
  });

  it('refuses a manifest that is not UTF-8', async () => {
    const root = await fixtures.tree({}, Buffer.from('schema: ai-repository/v1\n# caf\xe9\n', 'latin1'));
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.message).toContain('not valid UTF-8');
  });

  it.each([
    ['local: { path: .ai/repo/rules }', 'local.path: must not be inside the repo half (.ai/repo)'],
    ['local: { path: .ai/repo }', 'local.path: must not be inside the repo half (.ai/repo)'],
    ['local: { path: ./.ai/repo/ }', 'local.path: must not be inside the repo half (.ai/repo)'],
    ['local: { path: .ai }', 'local.path: the local half must not contain the repo half'],
    ['local: { path: .git }', 'local.path: must not be .git or inside a .git directory'],
    ['local: { path: .git/majordomus }', 'local.path: must not be .git or inside a .git directory'],
    ['local: { path: vendor/.GIT/x }', 'local.path: must not be .git or inside a .git directory'],
    ['local: { path: ../ESCAPED/x }', 'local.path: must name a directory below the root'],
    ['local: { path: . }', 'local.path: must name a directory below the root'],
    ['repo: { path: .git/layer }', 'repo.path: must not be .git or inside a .git directory'],
  ])('refuses the manifest paths %s', async (paths, expected) => {
    const root = await fixtures.tree({}, `schema: ai-repository/v1\n${paths}\n`);
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.code).toBe('MAJ_MANIFEST_INVALID');
    expect(error.message).toContain(expected);
  });

  it.each([
    ['schema: ai-repository/v1\nrepo: 3\n', 'repo: must be a mapping with "path"'],
    ['schema: ai-repository/v1\nlocal: { path: "" }\n', 'local.path: must be a non-empty string'],
    ['schema: ai-repository/v1\nrepo: { path: "a\\\\b" }\n', 'repo.path: must be a relative path with "/" separators'],
    ['schema: ai-repository/v1\nsections: rule\n', 'sections: must be a list of kinds'],
    ['schema: ai-repository/v1\nsections: [rule, rule]\n', 'sections: "rule" is listed twice'],
    ['schema: ai-repository/v1\nsections: [rule, recipe]\n', 'sections.1: "recipe" is not a kind'],
    ['repo: { path: .ai/repo }\n', 'schema: must be "ai-repository/v1", not missing'],
    ['schema: ai-repository/v1\nextra: 1\nmore: 2\n', 'unknown keys "extra", "more"'],
  ])('names the problem of %j', async (text, expected) => {
    const root = await fixtures.tree({}, text);
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.message).toContain(expected);
  });

  it('names every problem of a manifest at once', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v2\nrepo: { path: /abs }\nlocal: { path: .git }\n');
    const error = await refusal(readManifest(join(root, '.ai', 'manifest.yaml')));
    expect(error.message).toContain('schema: must be "ai-repository/v1", not "ai-repository/v2"; repo.path: must be a relative path');
    expect(error.message).toContain('; local.path: must not be .git');
  });

  it('keeps the listed sections in the order of the kind table', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\nsections: [policy, rule]\n');
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toMatchObject({ sections: ['rule', 'policy'] });
  });

  it('accepts halves side by side, and a local half whose name merely starts like the repo half', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\nrepo: { path: .ai/repo }\nlocal: { path: .ai/repo-local }\n');
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toMatchObject({ repoPath: '.ai/repo', localPath: '.ai/repo-local' });
  });

  it('defaults repo, local and sections when they are omitted', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\n');
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toEqual({
      schema: 'ai-repository/v1',
      repoPath: '.ai/repo',
      localPath: '.ai/local',
      sections: ['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy'],
      federation: { url: null, repository: null },
    });
  });

  it('reads the federation setting, and refuses a URL that is not NATS\'s, a bad name or an unknown key in it', async () => {
    const root = await fixtures.tree({}, 'schema: ai-repository/v1\nfederation: {url: "nats://broker:4222", repository: team-repo}\n');
    await expect(readManifest(join(root, '.ai', 'manifest.yaml'))).resolves.toMatchObject({ federation: { url: 'nats://broker:4222', repository: 'team-repo' } });
    for (const [federation, named] of [
      ['{url: "http://broker"}', 'federation.url'],
      ['{repository: "a.b"}', 'federation.repository'],
      ['{url: "nats://b:1", token: x}', '"federation.token"'],
      ['nats://b:1', 'federation: must be a mapping'],
    ] as const) {
      const bad = await fixtures.tree({}, `schema: ai-repository/v1\nfederation: ${federation}\n`);
      const error = await refusal(readManifest(join(bad, '.ai', 'manifest.yaml')));
      expect(error.code).toBe('MAJ_MANIFEST_INVALID');
      expect(error.message).toContain(named);
    }
  });

  it('starts the search at --repo instead of cwd', async () => {
    const elsewhere = await fixtures.dir();
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n' });
    const index = await loadLayer({ cwd: elsewhere, repo: join(root, 'deeper', '..'), discovery: 'filesystem', strict: false });
    expect(index.root).toBe(root);
    expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/a']);
  });
});
