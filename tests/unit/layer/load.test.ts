/**
 * loadLayer as a whole:
 * - a layer with a bad file is degraded but still serves the good ones;
 * - --strict refuses a degraded layer with MAJ_LAYER_DEGRADED listing every diagnostic;
 * - --strict serves a clean layer;
 * - two builds of one tree are deep-equal and byte-equal (sorted, no timestamps);
 * - the repository id is a stable hash of the root's real path;
 * - the project's own .ai/ layer loads with no diagnostic and serves its three ADRs.
 */
import { createHash } from 'node:crypto';
import { symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { loadLayer } from '../../../src/layer/load.js';
import { Fixtures, md } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

const MIXED = {
  '.ai/repo/rules/zeta.md': '# Zeta\n',
  '.ai/repo/rules/alpha.md': md('tags: [b, a]\n', '# Alpha\n'),
  '.ai/repo/adrs/0002-b.md': '# B\n',
  '.ai/repo/adrs/0001-a.md': '# A\n',
  '.ai/repo/skills/s/SKILL.md': md('name: s\ndescription: S.\n', ''),
  '.ai/repo/skills/broken/SKILL.md': '# no front matter\n',
  '.ai/repo/rules/unknown.md': md('nope: 1\n', '# Unknown\n'),
};

describe('loadLayer', () => {
  it('serves a degraded layer without --strict, leaving the bad files out', async () => {
    const root = await fixtures.tree(MIXED);
    const index = await loadLayer({ cwd: root, discovery: 'filesystem', strict: false });
    expect(index.state).toBe('degraded');
    expect(index.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(['unknown_key', 'missing_front_matter']);
    expect(index.objects.map((object) => object.id)).toEqual([
      'adr.0001-a',
      'adr.0002-b',
      'rule.alpha',
      'rule.zeta',
      'skill.s',
    ]);
  });

  it('refuses a degraded layer under --strict with MAJ_LAYER_DEGRADED listing every diagnostic', async () => {
    const root = await fixtures.tree(MIXED);
    const error = await loadLayer({ cwd: root, discovery: 'filesystem', strict: true }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(MajordomusError);
    const refusal = error as MajordomusError;
    expect(refusal.code).toBe('MAJ_LAYER_DEGRADED');
    expect(refusal.exitCode).toBe(10);
    expect(refusal.message).toContain('2 diagnostics');
    expect(refusal.message).toContain('unknown_key .ai/repo/rules/unknown.md');
    expect(refusal.message).toContain('missing_front_matter .ai/repo/skills/broken/SKILL.md');
  });

  it('serves a clean layer under --strict', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n' });
    const index = await loadLayer({ cwd: root, discovery: 'filesystem', strict: true });
    expect(index.state).toBe('ok');
    expect(index.diagnostics).toEqual([]);
  });

  it('builds the same index twice, to the byte', async () => {
    const root = await fixtures.tree(MIXED);
    const first = await loadLayer({ cwd: root, discovery: 'filesystem', strict: false });
    const second = await loadLayer({ cwd: root, discovery: 'filesystem', strict: false });
    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(first.objects.find((object) => object.id === 'rule.alpha')?.tags).toEqual(['a', 'b']);
  });

  it('names the repository by a hash of the real path of the root, whatever path led to it', async () => {
    const root = await fixtures.tree({ '.ai/repo/rules/a.md': '# A\n' });
    const alias = join(await fixtures.dir(), 'alias');
    await symlink(root, alias);
    const index = await loadLayer({ cwd: alias, discovery: 'filesystem', strict: false });
    expect(index.root).toBe(root);
    expect(index.repository_id).toBe(createHash('sha256').update(root).digest('hex').slice(0, 16));
    expect(index.repository_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('loads the project’s own layer with no diagnostic and serves its three ADRs', async () => {
    const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
    const index = await loadLayer({ cwd: join(projectRoot, 'src'), discovery: 'filesystem', strict: true });
    expect(index.diagnostics).toEqual([]);
    expect(index.state).toBe('ok');
    expect(index.objects.filter((object) => object.kind === 'adr').map((object) => object.uri)).toEqual([
      'majordomus://adr/0001-per-client-stdio-process',
      'majordomus://adr/0002-serve-and-the-http-projection',
      'majordomus://adr/0003-one-shared-server-per-checkout',
    ]);
    expect(new Set(index.objects.map((object) => object.kind))).toEqual(
      new Set(['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy']),
    );
  });
});
