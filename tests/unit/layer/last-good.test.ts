/**
 * The last good merge (src/layer/last-good.ts) and what changed between generations
 * (src/layer/changes.ts): a file the serving generation served that now fails keeps its object,
 * its diagnostic saying so; a file that never served, or is gone, keeps nothing; a build that
 * failed as a whole keeps every object with one reload_failed diagnostic.
 */
import { describe, expect, it } from 'vitest';
import { changedUris, sameLayer } from '../../../src/layer/changes.js';
import { keepAfterFailure, keepLastGood, LAST_GOOD_NOTE } from '../../../src/layer/last-good.js';
import type { Diagnostic, LayerIndex, LayerObject } from '../../../src/layer/types.js';

function rule(identity: string, content = `# ${identity}\n`): LayerObject {
  return {
    uri: `majordomus://rule/${identity}`,
    id: `rule.${identity}`,
    kind: 'rule',
    identity,
    title: identity,
    description: '',
    metadata: {},
    provenance: { path: `.ai/repo/rules/${identity}.md`, size: Buffer.byteLength(content) },
    media_type: 'text/markdown',
    content,
    tags: [],
  };
}

function broken(identity: string, code: Diagnostic['code'] = 'malformed_yaml'): Diagnostic {
  return { severity: 'error', code, path: `.ai/repo/rules/${identity}.md`, message: `${identity} is broken` };
}

function index(objects: LayerObject[], diagnostics: Diagnostic[] = []): LayerIndex {
  return {
    repository_id: 'r',
    root: '/r',
    localPath: '.ai/local',
    discovery: 'filesystem',
    state: diagnostics.length > 0 ? 'degraded' : 'ok',
    objects,
    diagnostics,
    sections: ['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy'],
  };
}

describe('keepLastGood', () => {
  it('keeps the serving object of a file that now fails, and says so in its diagnostic', () => {
    const serving = index([rule('a'), rule('b')]);
    const merged = keepLastGood(serving, index([rule('b')], [broken('a')]));
    expect(merged.objects.map((o) => o.uri)).toEqual(['majordomus://rule/a', 'majordomus://rule/b']);
    expect(merged.objects[0]).toBe(serving.objects[0]);
    expect(merged.diagnostics).toEqual([{ ...broken('a'), message: `a is broken; ${LAST_GOOD_NOTE}` }]);
    expect(merged.state).toBe('degraded');
  });

  it('keeps nothing for a file that never served (it fails from the start) or that is gone (no diagnostic)', () => {
    const serving = index([rule('a'), rule('gone')]);
    const fresh = index([rule('a')], [broken('new')]);
    expect(keepLastGood(serving, fresh)).toBe(fresh);
  });

  it('keeps a last good object again while its file still fails, and drops it once fixed', () => {
    const first = keepLastGood(index([rule('a', '# old\n')]), index([], [broken('a')]));
    const second = keepLastGood(first, index([], [broken('a')]));
    expect(second.objects.map((o) => o.content)).toEqual(['# old\n']);
    const fixed = keepLastGood(second, index([rule('a', '# new\n')]));
    expect(fixed).toMatchObject({ state: 'ok', diagnostics: [] });
    expect(fixed.objects.map((o) => o.content)).toEqual(['# new\n']);
  });

  it('never keeps an object whose URI the fresh build serves from another file', () => {
    const serving = index([rule('a')]);
    const moved = { ...rule('a', '# moved\n'), provenance: { path: '.ai/repo/rules/elsewhere.md', size: 8 } };
    const merged = keepLastGood(serving, index([moved], [broken('a')]));
    expect(merged.objects).toEqual([moved]);
    expect(merged.diagnostics).toEqual([broken('a')]);
  });

  it('keeps nothing of a kind the manifest no longer serves', () => {
    const fresh = { ...index([], [broken('a')]), sections: ['document' as const] };
    expect(keepLastGood(index([rule('a')]), fresh).objects).toEqual([]);
  });
});

describe('keepAfterFailure', () => {
  it('keeps every object and diagnostic, adding one reload_failed that replaces an earlier one', () => {
    const serving = index([rule('a')], [broken('z', 'schema_violation')]);
    const once = keepAfterFailure(serving, 'MAJ_MANIFEST_INVALID: unknown key "x"');
    const twice = keepAfterFailure(once, 'MAJ_NO_ROOT: gone');
    expect(twice.objects).toEqual(serving.objects);
    expect(twice.state).toBe('degraded');
    expect(twice.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'reload_failed',
        path: '.ai/manifest.yaml',
        message: 'the layer could not be rebuilt (MAJ_NO_ROOT: gone); the objects of the last good build are still served',
      },
      broken('z', 'schema_violation'),
    ]);
  });
});

describe('changedUris and sameLayer', () => {
  it('names what appeared, vanished or changed, sorted', () => {
    const before = index([rule('a'), rule('b'), rule('c')]);
    const after = index([rule('a'), rule('b', '# edited\n'), rule('d')]);
    expect(changedUris(before, after)).toEqual(['majordomus://rule/b', 'majordomus://rule/c', 'majordomus://rule/d']);
  });

  it('finds two builds of one tree the same, and a new diagnostic a difference', () => {
    const before = index([rule('a')]);
    expect(sameLayer(before, index([rule('a')]), [])).toBe(true);
    expect(sameLayer(before, index([rule('a')], [broken('x')]), [])).toBe(false);
  });
});
