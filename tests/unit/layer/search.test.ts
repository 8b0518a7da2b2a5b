/**
 * searchObjects:
 * - a title match outranks identity, tags, description and content matches;
 * - terms match case-insensitively at the start of a word ("lease" is not found in "release");
 * - the kind filter and the limit apply; ties are broken by uri; results are deterministic;
 * - a blank query or a non-positive limit gives [];
 * - 5,000 objects are searched quickly.
 */
import { describe, expect, it } from 'vitest';
import { objectUri } from '../../../src/layer/kinds.js';
import { queryTerms, searchObjects } from '../../../src/layer/search.js';
import type { LayerObject, ObjectKind } from '../../../src/layer/types.js';

function object(kind: ObjectKind, identity: string, fields: Partial<Pick<LayerObject, 'title' | 'description' | 'content' | 'tags'>>): LayerObject {
  return {
    uri: objectUri(kind, identity),
    id: `${kind}.${identity}`,
    kind,
    identity,
    title: fields.title ?? identity,
    description: fields.description ?? '',
    metadata: {},
    provenance: { path: `.ai/repo/${identity}.md`, size: 0 },
    media_type: 'text/markdown',
    content: fields.content ?? '',
    tags: fields.tags ?? [],
  };
}

const OBJECTS = [
  object('document', 'notes', { title: 'Notes', content: 'The Lease file is read by every bridge.' }),
  object('adr', '0003-shared', { title: 'One shared server and its LEASE', description: 'lease and election' }),
  object('rule', 'process/release', { title: 'Release', content: 'Cut a release.' }),
  object('rule', 'lease-rules', { title: 'Rules', tags: ['lease'] }),
  object('workflow', 'described', { title: 'Workflow', description: 'How the lease is taken over.' }),
];

describe('searchObjects', () => {
  it('ranks a title match above identity, tag, description and content matches', () => {
    const hits = searchObjects(OBJECTS, 'lease', { limit: 10 });
    expect(hits.map((hit) => hit.id)).toEqual(['adr.0003-shared', 'rule.lease-rules', 'workflow.described', 'document.notes']);
    expect(hits[0]).toMatchObject({ uri: 'majordomus://adr/0003-shared', kind: 'adr', title: 'One shared server and its LEASE' });
    const scores = hits.map((hit) => hit.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('matches at the start of words only, so "lease" does not find "release"', () => {
    expect(searchObjects(OBJECTS, 'lease', { limit: 10 }).map((hit) => hit.id)).not.toContain('rule.process/release');
    expect(searchObjects(OBJECTS, 'RELEA', { limit: 10 }).map((hit) => hit.id)).toEqual(['rule.process/release']);
  });

  it('filters by kind and applies the limit', () => {
    expect(searchObjects(OBJECTS, 'lease', { kind: 'rule', limit: 10 }).map((hit) => hit.id)).toEqual(['rule.lease-rules']);
    expect(searchObjects(OBJECTS, 'lease', { limit: 2 }).map((hit) => hit.id)).toEqual(['adr.0003-shared', 'rule.lease-rules']);
  });

  it('breaks ties by uri and answers the same every time', () => {
    const twins = [object('prompt', 'b', { title: 'Same words' }), object('prompt', 'a', { title: 'Same words' })];
    expect(searchObjects(twins, 'same', { limit: 5 }).map((hit) => hit.uri)).toEqual(['majordomus://prompt/a', 'majordomus://prompt/b']);
    expect(searchObjects(OBJECTS, 'lease bridge', { limit: 10 })).toEqual(searchObjects(OBJECTS, 'lease bridge', { limit: 10 }));
  });

  it('scores more matched terms higher', () => {
    const hits = searchObjects(OBJECTS, 'lease bridge', { limit: 10 });
    expect(hits.find((hit) => hit.id === 'document.notes')?.score).toBeGreaterThan(
      searchObjects(OBJECTS, 'lease', { limit: 10 }).find((hit) => hit.id === 'document.notes')?.score ?? Infinity,
    );
  });

  it('returns [] for a blank query, a query of punctuation, or a non-positive limit', () => {
    expect(searchObjects(OBJECTS, '', { limit: 10 })).toEqual([]);
    expect(searchObjects(OBJECTS, '   \t', { limit: 10 })).toEqual([]);
    expect(searchObjects(OBJECTS, '--- !!', { limit: 10 })).toEqual([]);
    expect(searchObjects(OBJECTS, 'lease', { limit: 0 })).toEqual([]);
    expect(queryTerms('Shared-Server  shared')).toEqual(['shared', 'server']);
  });

  // Speed is measured in benches/micro.mjs; here only the result on a large layer.
  it('ranks and limits the hits of a 5,000-object layer', () => {
    const many = Array.from({ length: 5000 }, (_, n) =>
      object('document', `doc-${String(n).padStart(4, '0')}`, {
        title: `Document ${n}`,
        content: `${'lorem ipsum dolor sit amet '.repeat(80)} topic-${n % 50}`,
      }),
    );
    searchObjects(many, 'warm', { limit: 10 });
    const hits = searchObjects(many, 'topic ipsum', { limit: 20 });
    expect(hits).toHaveLength(20);
    expect(hits.map((h) => h.uri)).toEqual([...hits.map((h) => h.uri)].sort((a, b) => a.localeCompare(b)));
  });
});
