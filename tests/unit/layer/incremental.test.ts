/**
 * The incremental build (ParsedFiles): a build that reuses what the last one made of each file
 * whose bytes did not change gives byte for byte the index a full build gives for the same tree —
 * over seeded random edits (writes, rewrites with the same bytes, deletions, broken files,
 * duplicate identities appearing and going) in both discovery modes — and parses only the files
 * whose bytes changed.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIndex, readManifest } from '../../../src/layer/load.js';
import { ParsedFiles } from '../../../src/layer/parsed-files.js';
import type { DiscoveryMode, LayerIndex } from '../../../src/layer/types.js';
import { Fixtures, git, gitTrack, md, put } from './fixture.js';
import { seeded } from '../../helpers/seeded.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

async function build(root: string, mode: DiscoveryMode, parsed?: ParsedFiles): Promise<LayerIndex> {
  return buildIndex(root, await readManifest(join(root, '.ai', 'manifest.yaml')), mode, parsed);
}

const MARKDOWN_PATHS = [
  '.ai/repo/rules/a.md',
  '.ai/repo/rules/nested/b.md',
  '.ai/repo/knowledge/c.md',
  '.ai/repo/knowledge/deep/d.md',
  '.ai/repo/prompts/e.md',
  '.ai/repo/adrs/0001-f.md',
  '.ai/repo/workflows/g.md',
];
const PROFILE_PATHS = ['.ai/repo/profiles/p.yaml', '.ai/repo/profiles/q.yaml', '.ai/repo/profiles/r.yaml'];
const SKILL_PATH = '.ai/repo/skills/tool/SKILL.md';

function markdownVariant(pick: () => number): string | Buffer {
  const n = Math.floor(pick() * 1000);
  switch (Math.floor(pick() * 6)) {
    case 0:
      return `# Heading ${n}\n\nParagraph ${n}.\n`;
    case 1:
      return md(`title: Titled ${n}\ntags: [t${n % 3}, shared]\n`, `Body ${n}\n`);
    case 2:
      return md(`description: described ${n}\n`, '# Same heading\n');
    case 3:
      return `---\ntitle: never closed ${n}\n# body\n`;
    case 4:
      return Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]);
    default:
      return md(`unknown_key_${n % 2}: 1\n`, '# Unknown\n');
  }
}

function profileVariant(pick: () => number): string {
  // Ids from a set of two, so profiles claim the same identity now and then.
  const id = pick() < 0.5 ? 'x' : 'y';
  switch (Math.floor(pick() * 3)) {
    case 0:
      return `id: ${id}\nagent: claude\nharness: { enabled: false }\n`;
    case 1:
      return `id: ${id}\nagent: [claude\n`;
    default:
      return `id: ${id}\nagent: codex\nharness: { enabled: true }\ndescription: the ${id} profile\n`;
  }
}

function skillVariant(pick: () => number): string {
  return pick() < 0.5 ? md('name: Tool\ndescription: a tool\n', '# Tool\n') : '# no front matter\n';
}

async function edit(root: string, pick: () => number, present: Set<string>): Promise<void> {
  const all = [...MARKDOWN_PATHS, ...PROFILE_PATHS, SKILL_PATH];
  const edits = 1 + Math.floor(pick() * 3);
  for (let k = 0; k < edits; k++) {
    const path = all[Math.floor(pick() * all.length)] as string;
    if (present.has(path) && pick() < 0.25) {
      await rm(join(root, path));
      present.delete(path);
      continue;
    }
    const content = PROFILE_PATHS.includes(path) ? profileVariant(pick) : path === SKILL_PATH ? skillVariant(pick) : markdownVariant(pick);
    await put(root, path, content);
    present.add(path);
  }
}

describe('the incremental build', () => {
  for (const mode of ['filesystem', 'vcs'] as const) {
    it(`gives byte for byte the full build's index after each of 40 seeded random edits (${mode})`, async () => {
      const root = await fixtures.tree({ '.ai/repo/rules/base.md': '# Base\n' });
      if (mode === 'vcs') gitTrack(root);
      const pick = seeded(mode === 'vcs' ? 1313 : 4242);
      const parsed = new ParsedFiles();
      const present = new Set<string>();
      let sawDuplicate = false;
      let sawReuse = false;
      for (let step = 0; step < 40; step++) {
        await edit(root, pick, present);
        if (mode === 'vcs') git(root, 'add', '-A', '--', '.ai');
        const incremental = await build(root, mode, parsed);
        const full = await build(root, mode);
        expect(JSON.stringify(incremental), `step ${step}`).toBe(JSON.stringify(full));
        sawDuplicate ||= full.diagnostics.some((diagnostic) => diagnostic.code === 'duplicate_identity');
        sawReuse ||= parsed.reused > 0;
      }
      // The edits did cover the cross-file rule, and the builds did reuse.
      expect(sawDuplicate).toBe(true);
      expect(sawReuse).toBe(true);
    });
  }

  it('parses only the files whose bytes changed; a deleted file drops out; same bytes again are reused', async () => {
    const root = await fixtures.tree({
      '.ai/repo/rules/one.md': '# One\n',
      '.ai/repo/rules/two.md': '# Two\n',
      '.ai/repo/knowledge/three.md': '# Three\n',
      '.ai/repo/profiles/p.yaml': 'id: p\nagent: claude\nharness: { enabled: false }\n',
    });
    const parsed = new ParsedFiles();
    await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([0, 4]);

    await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([4, 4]);

    await put(root, '.ai/repo/rules/two.md', '# Two, edited\n');
    const edited = await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([3, 4]);
    expect(edited.objects.find((object) => object.uri === 'majordomus://rule/two')?.title).toBe('Two, edited');

    await rm(join(root, '.ai/repo/knowledge/three.md'));
    const removed = await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([3, 3]);
    expect(removed.objects.map((object) => object.uri)).not.toContain('majordomus://document/three');

    // Rewritten with the bytes it had: nothing to parse.
    await put(root, '.ai/repo/rules/one.md', '# One\n');
    await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([3, 3]);

    // The same bytes at another path are that path's own file: parsed, with its own identity.
    await put(root, '.ai/repo/rules/copy.md', '# One\n');
    const copied = await build(root, 'filesystem', parsed);
    expect([parsed.reused, parsed.size]).toEqual([3, 4]);
    expect(copied.objects.find((object) => object.uri === 'majordomus://rule/copy')?.provenance.path).toBe('.ai/repo/rules/copy.md');
  });
});
