/**
 * The kind table, through a real index build:
 * - every kind is indexed with its uri, id, identity, title, description, tags, media type and
 *   provenance;
 * - title and description rules (front matter first, then the body);
 * - files matching no pattern, and kinds not enabled in `sections`, are ignored;
 * - the metadata schemas turn into JSON Schema.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { KIND_SCHEMAS, KINDS, matchKind } from '../../../src/layer/kinds.js';
import { buildIndex, readManifest } from '../../../src/layer/load.js';
import { OBJECT_KINDS, type LayerIndex } from '../../../src/layer/types.js';
import { Fixtures, MANIFEST, md } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

const EVERY_KIND = {
  '.ai/repo/rules/style/typescript.md': md('title: TypeScript style\ntags: [ts, style, ts]\napplies_to: ["src/**"]\n', '# Ignored H1\n\nUse strict mode.\n'),
  '.ai/repo/rules/plain.md': '# Plain rule\n\nFirst *paragraph* with a [link](https://example.com)\nover two lines.\n\nSecond paragraph.\n',
  '.ai/repo/skills/deploy/SKILL.md': md('name: deploy-app\ndescription: Deploys the app.\nallowed-tools: [Bash, Read]\n', '# Deploy\n\nSteps.\n'),
  '.ai/repo/skills/deploy/scripts/run.md': '# not a skill file\n',
  '.ai/repo/prompts/review.md': '# Review prompt\n\nReview the diff.\n',
  '.ai/repo/workflows/release.md': '# Release workflow\n',
  '.ai/repo/adrs/0001-first.md': '<!-- status: accepted -->\n# ADR 1 — `mcp` on stdio\n\n```\n# not a heading\n```\n\nWe decided.\n',
  '.ai/repo/knowledge/guides/setup.md': 'No heading here, only prose.\n',
  '.ai/repo/profiles/reviewer.yaml': 'id: claude-reviewer\nagent: claude\nargs: [--verbose]\nenv: { A: "1" }\nharness: { enabled: true }\ndescription: Reviews.\n',
  '.ai/repo/policy.yaml': 'permissions: { deny: [".env*"] }\nharness: { max_sessions: 3 }\n',
  '.ai/repo/README.md': '# matches no kind\n',
  '.ai/repo/prompts/nested/too-deep.md': '# prompts are flat\n',
  '.ai/repo/profiles/notes.txt': 'not yaml\n',
};

async function indexOf(files: Record<string, string>, manifest = MANIFEST): Promise<LayerIndex> {
  const root = await fixtures.tree(files, manifest);
  return buildIndex(root, await readManifest(join(root, '.ai', 'manifest.yaml')), 'filesystem');
}

describe('the kind table', () => {
  it('indexes every kind with its uri, id, identity and title', async () => {
    const index = await indexOf(EVERY_KIND);
    expect(index.diagnostics).toEqual([]);
    expect(index.state).toBe('ok');
    expect(index.objects.map(({ uri, id, kind, identity, title }) => ({ uri, id, kind, identity, title }))).toEqual([
      { uri: 'majordomus://adr/0001-first', id: 'adr.0001-first', kind: 'adr', identity: '0001-first', title: 'ADR 1 — mcp on stdio' },
      { uri: 'majordomus://document/guides/setup', id: 'document.guides/setup', kind: 'document', identity: 'guides/setup', title: 'guides/setup' },
      { uri: 'majordomus://policy/policy', id: 'policy.policy', kind: 'policy', identity: 'policy', title: 'policy' },
      { uri: 'majordomus://profile/claude-reviewer', id: 'profile.claude-reviewer', kind: 'profile', identity: 'claude-reviewer', title: 'claude-reviewer' },
      { uri: 'majordomus://prompt/review', id: 'prompt.review', kind: 'prompt', identity: 'review', title: 'Review prompt' },
      { uri: 'majordomus://rule/plain', id: 'rule.plain', kind: 'rule', identity: 'plain', title: 'Plain rule' },
      { uri: 'majordomus://rule/style/typescript', id: 'rule.style/typescript', kind: 'rule', identity: 'style/typescript', title: 'TypeScript style' },
      { uri: 'majordomus://skill/deploy', id: 'skill.deploy', kind: 'skill', identity: 'deploy', title: 'deploy-app' },
      { uri: 'majordomus://workflow/release', id: 'workflow.release', kind: 'workflow', identity: 'release', title: 'Release workflow' },
    ]);
  });

  it('fills description, tags, metadata, media type, provenance and content', async () => {
    const index = await indexOf(EVERY_KIND);
    const byId = new Map(index.objects.map((object) => [object.id, object]));
    const rule = byId.get('rule.style/typescript');
    expect(rule?.tags).toEqual(['style', 'ts']);
    expect(rule?.metadata).toEqual({ title: 'TypeScript style', tags: ['ts', 'style', 'ts'], applies_to: ['src/**'] });
    expect(rule?.description).toBe('Use strict mode.');
    expect(rule?.media_type).toBe('text/markdown');
    expect(rule?.provenance).toEqual({ path: '.ai/repo/rules/style/typescript.md', size: Buffer.byteLength(EVERY_KIND['.ai/repo/rules/style/typescript.md']) });
    expect(rule?.content).toBe(EVERY_KIND['.ai/repo/rules/style/typescript.md']);
    expect(byId.get('rule.plain')?.description).toBe('First paragraph with a link over two lines.');
    expect(byId.get('rule.plain')?.tags).toEqual([]);
    expect(byId.get('rule.plain')?.metadata).toEqual({});
    expect(byId.get('adr.0001-first')?.description).toBe('We decided.');
    expect(byId.get('skill.deploy')?.description).toBe('Deploys the app.');
    expect(byId.get('profile.claude-reviewer')?.description).toBe('Reviews.');
    expect(byId.get('profile.claude-reviewer')?.media_type).toBe('application/yaml');
    expect(byId.get('profile.claude-reviewer')?.metadata).toMatchObject({ agent: 'claude', harness: { enabled: true } });
    expect(byId.get('policy.policy')?.description).toBe('');
    expect(byId.get('workflow.release')?.description).toBe('');
  });

  it('cuts a long first paragraph to 280 characters', async () => {
    const index = await indexOf({ '.ai/repo/prompts/long.md': `# Long\n\n${'word '.repeat(200)}\n` });
    const description = index.objects[0]?.description ?? '';
    expect(description.length).toBe(280);
    expect(description.endsWith('…')).toBe(true);
  });

  it('ignores kinds that the manifest does not enable', async () => {
    const index = await indexOf(EVERY_KIND, `${MANIFEST}sections: [adr, rule]\n`);
    expect(index.sections).toEqual(['rule', 'adr']);
    expect([...new Set(index.objects.map((object) => object.kind))]).toEqual(['adr', 'rule']);
  });

  it('percent-encodes identity segments that are not URI-safe, keeping the identity as written', async () => {
    const index = await indexOf({ '.ai/repo/knowledge/team notes/q&a.md': '# Q&A\n' });
    expect(index.objects[0]).toMatchObject({ identity: 'team notes/q&a', uri: 'majordomus://document/team%20notes/q%26a' });
  });

  it('matches paths to kinds by the table alone', () => {
    const all = new Set(OBJECT_KINDS);
    expect(matchKind('rules/a/b.md', all)).toMatchObject({ spec: { kind: 'rule' }, pathIdentity: 'a/b' });
    expect(matchKind('skills/x/SKILL.md', all)).toMatchObject({ spec: { kind: 'skill' }, pathIdentity: 'x' });
    expect(matchKind('skills/SKILL.md', all)).toBeUndefined();
    expect(matchKind('prompts/a/b.md', all)).toBeUndefined();
    expect(matchKind('profiles/p.yml', all)).toBeUndefined();
    // Profile families nest: the path below profiles/ (the identity is the file's `id`).
    expect(matchKind('profiles/team/claude-worker.yaml', all)).toMatchObject({ spec: { kind: 'profile' }, pathIdentity: 'team/claude-worker' });
    expect(matchKind('profiles/team/.yaml', all)).toBeUndefined();
    expect(matchKind('policy.yaml', all)).toMatchObject({ spec: { kind: 'policy' } });
    expect(matchKind('rules/a.md', new Set(['adr'] as const))).toBeUndefined();
  });

  it('reaches every kind of the table from an example of its own `where` pattern', () => {
    const all = new Set(OBJECT_KINDS);
    for (const kind of OBJECT_KINDS) {
      const example = KINDS[kind].where.replace('**/', 'a/').replace('*', 'x').replace('<id>', 'x');
      expect(matchKind(example, all)?.spec.kind, `${kind} from ${example}`).toBe(kind);
    }
  });

  it('gives a strict JSON Schema for every kind', () => {
    for (const kind of OBJECT_KINDS) {
      const schema = z.toJSONSchema(KIND_SCHEMAS[kind]) as { type: string; additionalProperties: boolean };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      expect(KINDS[kind].schema).toBe(KIND_SCHEMAS[kind]);
    }
  });
});
