/**
 * Every diagnostic code, each produced by a real file through the real code path; a file with an
 * error is left out and the index is degraded but still serves the rest:
 * malformed_front_matter, missing_front_matter, malformed_yaml, unknown_key, schema_violation,
 * duplicate_identity, invalid_utf8, oversized, symlink, unreadable.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIndex, MAX_FILE_BYTES, readManifest } from '../../../src/layer/load.js';
import type { DiscoveryMode, LayerIndex } from '../../../src/layer/types.js';
import { Fixtures, gitTrack, md, put } from './fixture.js';

const fixtures = new Fixtures();
afterEach(() => fixtures.cleanup());

const GOOD = { '.ai/repo/rules/good.md': '# Good\n' };

async function build(root: string, mode: DiscoveryMode = 'filesystem'): Promise<LayerIndex> {
  return buildIndex(root, await readManifest(join(root, '.ai', 'manifest.yaml')), mode);
}

async function indexOf(files: Record<string, string | Buffer>): Promise<LayerIndex> {
  return build(await fixtures.tree({ ...GOOD, ...files }));
}

function codes(index: LayerIndex): Array<[string, string]> {
  return index.diagnostics.map((diagnostic) => [diagnostic.path, diagnostic.code]);
}

function expectDegradedButServing(index: LayerIndex): void {
  expect(index.state).toBe('degraded');
  expect(index.objects.map((object) => object.uri)).toEqual(['majordomus://rule/good']);
  for (const diagnostic of index.diagnostics) expect(diagnostic.severity).toBe('error');
}

describe('diagnostics', () => {
  it('reports malformed_front_matter for an opening --- that is never closed', async () => {
    const index = await indexOf({ '.ai/repo/rules/open.md': '---\ntitle: Open\n# Body without a closing fence\n' });
    expect(codes(index)).toEqual([['.ai/repo/rules/open.md', 'malformed_front_matter']]);
    expect(index.diagnostics[0]?.message).toContain('no closing ---');
    expectDegradedButServing(index);
  });

  it('reports malformed_front_matter for front matter that is not a mapping', async () => {
    const index = await indexOf({ '.ai/repo/prompts/list.md': md('- a\n- b\n', '# List\n') });
    expect(codes(index)).toEqual([['.ai/repo/prompts/list.md', 'malformed_front_matter']]);
    expect(index.diagnostics[0]?.message).toContain('mapping');
    expectDegradedButServing(index);
  });

  it('reports missing_front_matter for a skill without front matter', async () => {
    const index = await indexOf({ '.ai/repo/skills/bare/SKILL.md': '# Bare skill\n\nNo front matter.\n' });
    expect(codes(index)).toEqual([['.ai/repo/skills/bare/SKILL.md', 'missing_front_matter']]);
    expect(index.diagnostics[0]?.message).toContain('name and description');
    expectDegradedButServing(index);
  });

  it('reports malformed_yaml for broken YAML in front matter, naming the line of the file', async () => {
    const index = await indexOf({ '.ai/repo/rules/bad.md': md('title: ok\ntags: [unclosed\n', '# Bad\n') });
    expect(codes(index)).toEqual([['.ai/repo/rules/bad.md', 'malformed_yaml']]);
    expectDegradedButServing(index);
  });

  it('reports malformed_yaml for a profile that is not valid YAML and for duplicate keys', async () => {
    const index = await indexOf({
      '.ai/repo/profiles/broken.yaml': 'id: x\nagent: [claude\n',
      '.ai/repo/profiles/twice.yaml': 'id: x\nid: y\n',
    });
    expect(codes(index)).toEqual([
      ['.ai/repo/profiles/broken.yaml', 'malformed_yaml'],
      ['.ai/repo/profiles/twice.yaml', 'malformed_yaml'],
    ]);
    expect(index.diagnostics[1]?.message).toContain('unique');
    expectDegradedButServing(index);
  });

  it('reports unknown_key for a key the kind schema does not know, at any depth', async () => {
    const index = await indexOf({
      '.ai/repo/rules/extra.md': md('title: Extra\ncolour: blue\n', 'Body.\n'),
      '.ai/repo/policy.yaml': 'permissions: { deny: [], block: [x] }\n',
    });
    expect(codes(index)).toEqual([
      ['.ai/repo/policy.yaml', 'unknown_key'],
      ['.ai/repo/rules/extra.md', 'unknown_key'],
    ]);
    expect(index.diagnostics[0]?.message).toContain('"permissions.block"');
    expect(index.diagnostics[1]?.message).toContain('"colour"');
    expectDegradedButServing(index);
  });

  it('reports schema_violation for a wrong type, a missing required field or a bad enum value', async () => {
    const index = await indexOf({
      '.ai/repo/rules/typed.md': md('tags: not-a-list\n', '# Typed\n'),
      '.ai/repo/skills/nameless/SKILL.md': md('description: no name\n', 'Body.\n'),
      '.ai/repo/profiles/p.yaml': 'id: p\nagent: cursor\nharness: { enabled: true }\n',
      '.ai/repo/policy.yaml': 'harness: { max_depth: 0 }\n',
      '.ai/repo/profiles/scalar.yaml': 'just a string\n',
    });
    expect(codes(index)).toEqual([
      ['.ai/repo/policy.yaml', 'schema_violation'],
      ['.ai/repo/profiles/p.yaml', 'schema_violation'],
      ['.ai/repo/profiles/scalar.yaml', 'schema_violation'],
      ['.ai/repo/rules/typed.md', 'schema_violation'],
      ['.ai/repo/skills/nameless/SKILL.md', 'schema_violation'],
    ]);
    const messages = index.diagnostics.map((diagnostic) => diagnostic.message);
    expect(messages[0]).toContain('harness.max_depth');
    expect(messages[1]).toContain('agent');
    expect(messages[3]).toContain('tags');
    expect(messages[4]).toContain('name');
    expectDegradedButServing(index);
  });

  it('reports unknown_key and schema_violation together when a file has both', async () => {
    const index = await indexOf({ '.ai/repo/rules/both.md': md('title: 3\nextra: x\n', 'Body.\n') });
    expect(codes(index)).toEqual([
      ['.ai/repo/rules/both.md', 'schema_violation'],
      ['.ai/repo/rules/both.md', 'unknown_key'],
    ]);
  });

  it('reports duplicate_identity on both files and serves neither', async () => {
    const index = await indexOf({
      '.ai/repo/profiles/a.yaml': 'id: same\nagent: codex\nharness: { enabled: false }\n',
      '.ai/repo/profiles/b.yaml': 'id: same\nagent: gemini\nharness: { enabled: false }\n',
    });
    expect(codes(index)).toEqual([
      ['.ai/repo/profiles/a.yaml', 'duplicate_identity'],
      ['.ai/repo/profiles/b.yaml', 'duplicate_identity'],
    ]);
    expect(index.diagnostics[0]?.message).toContain('.ai/repo/profiles/b.yaml');
    expect(index.diagnostics[1]?.message).toContain('.ai/repo/profiles/a.yaml');
    expect(index.diagnostics[0]?.message).toContain('majordomus://profile/same');
    expectDegradedButServing(index);
  });

  it('reports invalid_utf8 for bytes that are not UTF-8', async () => {
    const index = await indexOf({ '.ai/repo/rules/latin1.md': Buffer.from([0x23, 0x20, 0x43, 0x61, 0x66, 0xe9, 0x0a]) });
    expect(codes(index)).toEqual([['.ai/repo/rules/latin1.md', 'invalid_utf8']]);
    expectDegradedButServing(index);
  });

  it('reports oversized for a file of 4 MiB + 1 byte without reading it', async () => {
    // Invalid UTF-8 throughout: had the file been read, invalid_utf8 would appear too.
    const index = await indexOf({ '.ai/repo/knowledge/huge.md': Buffer.alloc(MAX_FILE_BYTES + 1, 0xff) });
    expect(codes(index)).toEqual([['.ai/repo/knowledge/huge.md', 'oversized']]);
    expect(index.diagnostics[0]?.message).toContain(String(MAX_FILE_BYTES + 1));
    expectDegradedButServing(index);
  });

  it('serves a file of exactly 4 MiB', async () => {
    const index = await indexOf({ '.ai/repo/knowledge/big.md': Buffer.alloc(MAX_FILE_BYTES, 0x61) });
    expect(index.diagnostics).toEqual([]);
    expect(index.objects.find((object) => object.id === 'document.big')?.provenance.size).toBe(MAX_FILE_BYTES);
  });

  it.each(['filesystem', 'vcs'] as const)('reports symlink for a linked file or directory and never follows it (%s discovery)', async (mode) => {
    const root = await fixtures.tree({ ...GOOD, 'outside.md': '# Outside the layer\n', 'elsewhere/x.md': '# X\n' });
    await symlink('../../../outside.md', join(root, '.ai/repo/rules/link.md'));
    await symlink('../../../elsewhere', join(root, '.ai/repo/rules/linked-dir'));
    await symlink('../../../elsewhere', join(root, '.ai/repo/knowledge'));
    if (mode === 'vcs') gitTrack(root);
    const index = await build(root, mode);
    expect(codes(index)).toEqual([
      ['.ai/repo/knowledge', 'symlink'],
      ['.ai/repo/rules/link.md', 'symlink'],
      ['.ai/repo/rules/linked-dir', 'symlink'],
    ]);
    expect(index.diagnostics[1]?.message).toContain('../../../outside.md');
    expect(index.diagnostics[2]?.message).toContain('nothing below it is served');
    expectDegradedButServing(index);
  });

  it('reports symlink when the whole repo half is a link', async () => {
    const root = await fixtures.tree({ 'real/rules/a.md': '# A\n' });
    await mkdir(join(root, '.ai'), { recursive: true });
    await symlink('../real', join(root, '.ai/repo'));
    const index = await build(root);
    expect(codes(index)).toEqual([['.ai/repo', 'symlink']]);
    expect(index.objects).toEqual([]);
  });

  it('reports unreadable for a FIFO where a rule should be, without blocking on it', async () => {
    // Tests run as root, so chmod 000 cannot make a file unreadable; a FIFO is not a regular file.
    const root = await fixtures.tree(GOOD);
    execFileSync('mkfifo', [join(root, '.ai/repo/rules/pipe.md')]);
    const index = await build(root);
    expect(codes(index)).toEqual([['.ai/repo/rules/pipe.md', 'unreadable']]);
    expect(index.diagnostics[0]?.message).toContain('FIFO');
    expectDegradedButServing(index);
  });

  it('reports unreadable for a tracked file missing from the working tree (vcs discovery)', async () => {
    const root = await fixtures.tree({ ...GOOD, '.ai/repo/rules/gone.md': '# Gone\n' });
    gitTrack(root);
    await unlink(join(root, '.ai/repo/rules/gone.md'));
    const index = await build(root, 'vcs');
    expect(codes(index)).toEqual([['.ai/repo/rules/gone.md', 'unreadable']]);
    expect(index.diagnostics[0]?.message).toContain('ENOENT');
    expectDegradedButServing(index);
  });

  it('reports unreadable for a directory listed by git as a submodule where a rule should be', async () => {
    const root = await fixtures.tree(GOOD);
    const inner = join(root, '.ai/repo/rules/sub.md');
    await put(inner, 'README', 'x');
    gitTrack(inner);
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e.invalid', 'commit', '-q', '-m', 'x'], { cwd: inner });
    gitTrack(root);
    const index = await build(root, 'vcs');
    expect(codes(index)).toEqual([['.ai/repo/rules/sub.md', 'unreadable']]);
    expect(index.diagnostics[0]?.message).toContain('directory');
  });
});
