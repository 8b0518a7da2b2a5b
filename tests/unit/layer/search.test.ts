/**
 * The full-text search (SearchIndex, buildSearchIndex, searchObjects):
 * - BM25 ranking with field boosts: a title match outranks identity, tags, description and
 *   content matches; more matched terms score higher;
 * - prefix matching from 3 characters, bounded typo tolerance (short terms stay exact);
 * - accent- and case-insensitive on both sides ("zlutoucky kun" finds "Žluťoučký kůň");
 * - the kind filter and the limit apply; ties are broken by uri; results are deterministic;
 * - a serialized index (through JSON) answers exactly as a freshly built one; a foreign or stale
 *   one is rebuilt rather than trusted;
 * - a query scores as MiniSearch's own OR query does (each term's results are kept and combined),
 *   asked cold or again, alone or among other queries sharing its terms; a repeated term counts once;
 * - each term is scored from MiniSearch's postings to exactly the number MiniSearch.search gives
 *   (exact, prefix and typo matches); an index holding discarded documents is asked of MiniSearch;
 * - a live index (the build worker's) updated with seeded random removals, changes and additions
 *   serializes to an index holding the same postings and lengths as a fresh build, and answering
 *   exactly like it;
 * - a blank query or a non-positive limit gives [];
 * - the layer view builds its index lazily, or loads the one it is given.
 */
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { objectUri } from '../../../src/layer/kinds.js';
import { buildSearchIndex, foldTerm, LiveSearchIndex, MINISEARCH_OPTIONS, queryTerms, SearchIndex, searchObjects, typoTolerance, type IndexedDocument } from '../../../src/layer/search.js';
import type { LayerIndex, LayerObject, ObjectKind } from '../../../src/layer/types.js';
import { TermScorer } from '../../../src/layer/term-scorer.js';
import { createLayerView } from '../../../src/layer/view.js';
import { seeded } from '../../helpers/seeded.js';

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

/** "lease" once in each field of a different object (the identity of rule.lease-rules). */
const OBJECTS = [
  object('document', 'notes', { title: 'Notes', content: 'The Lease file is read by every bridge.' }),
  object('adr', '0003-shared', { title: 'One shared server and its LEASE', description: 'election' }),
  object('rule', 'process/release', { title: 'Release', content: 'Cut a release.' }),
  object('rule', 'lease-rules', { title: 'Rules' }),
  object('prompt', 'tagged', { title: 'Tagged', tags: ['lease'] }),
  object('workflow', 'described', { title: 'Workflow', description: 'How the lease is taken over.' }),
  object('document', 'czech', { title: 'Žluťoučký kůň', content: 'Příliš žluťoučký kůň úpěl ďábelské ódy.' }),
  object('skill', 'snapshot-tools', { title: 'Snapshot tools', description: 'Encode and decode a snapshot.' }),
];

const ids = (hits: ReadonlyArray<{ id: string }>): string[] => hits.map((hit) => hit.id);

describe('the search index', () => {
  const index = SearchIndex.build(OBJECTS);

  it('ranks by field: title, then identity, tags, description, content; scores descend', () => {
    const hits = index.search('lease', { limit: 10 });
    expect(ids(hits)).toEqual(['adr.0003-shared', 'rule.lease-rules', 'prompt.tagged', 'workflow.described', 'document.notes']);
    expect(hits[0]).toMatchObject({ uri: 'majordomus://adr/0003-shared', kind: 'adr', title: 'One shared server and its LEASE', description: 'election' });
    const scores = hits.map((hit) => hit.score);
    expect(scores.every((score) => score > 0)).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(new Set(scores).size).toBe(scores.length);
  });

  it('scores a document that matches more terms higher', () => {
    const one = index.search('lease', { limit: 10 }).find((hit) => hit.id === 'document.notes')?.score ?? Infinity;
    const two = index.search('lease bridge', { limit: 10 }).find((hit) => hit.id === 'document.notes')?.score ?? 0;
    expect(two).toBeGreaterThan(one);
  });

  it('finds the words a term of 3 or more characters begins, not words that merely contain it', () => {
    expect(ids(index.search('RELEA', { limit: 10 }))).toEqual(['rule.process/release']);
    expect(ids(index.search('snap', { limit: 10 }))).toEqual(['skill.snapshot-tools']);
    expect(ids(index.search('lease', { limit: 10 }))).not.toContain('rule.process/release');
    // Two characters stay exact: "sn" begins "snapshot" but finds nothing.
    expect(index.search('sn', { limit: 10 })).toEqual([]);
  });

  it('tolerates a typo in a longer term, and none in a short one', () => {
    expect(ids(index.search('snapshto', { limit: 10 }))).toEqual([]); // a transposition is two edits
    expect(ids(index.search('snapsot', { limit: 10 }))).toEqual(['skill.snapshot-tools']); // one deletion
    expect(ids(index.search('electoin', { limit: 10 }))).toEqual([]);
    expect(ids(index.search('elektion', { limit: 10 }))).toEqual(['adr.0003-shared']);
    expect(index.search('cuts', { limit: 10 })).toEqual([]); // 4 characters: exact, "cut" is not found
    expect(ids(index.search('cut', { limit: 10 }))).toEqual(['rule.process/release']);
    expect([typoTolerance('pool'), typoTolerance('bridge'), typoTolerance('snapshots'), typoTolerance('throughput')]).toEqual([0, 1, 2, 2]);
  });

  it('ranks an exact match above a typo-tolerant one', () => {
    const both = SearchIndex.build([object('document', 'exact', { content: 'bridge' }), object('document', 'typo', { content: 'bridges' })]);
    expect(ids(both.search('bridge', { limit: 10 }))).toEqual(['document.exact', 'document.typo']);
  });

  it('matches without regard to accents or case, in the query and in the text', () => {
    expect(ids(index.search('zlutoucky kun', { limit: 10 }))).toEqual(['document.czech']);
    expect(ids(index.search('ŽLUŤOUČKÝ', { limit: 10 }))).toEqual(['document.czech']);
    expect(ids(index.search('odý ďabelske', { limit: 10 }))).toEqual(['document.czech']);
    const decomposed = 'zlutoucky'.normalize('NFC').replace('u', 'u\u030a'); // "ů" as u + combining ring
    expect(ids(index.search(decomposed, { limit: 10 }))).toEqual(['document.czech']);
    expect(foldTerm('Žluťoučký')).toBe('zlutoucky');
    expect(queryTerms('Shared-Server  shared Kůň')).toEqual(['shared', 'server', 'kun']);
  });

  it('filters by kind and applies the limit after ranking', () => {
    expect(ids(index.search('lease', { kind: 'rule', limit: 10 }))).toEqual(['rule.lease-rules']);
    expect(ids(index.search('lease', { kind: 'policy', limit: 10 }))).toEqual([]);
    expect(ids(index.search('lease', { limit: 2 }))).toEqual(['adr.0003-shared', 'rule.lease-rules']);
    expect(ids(index.search('lease', { limit: 2.9 }))).toHaveLength(2);
  });

  it('breaks ties by uri whatever the order of the objects, and answers the same every time', () => {
    const twins = [object('prompt', 'b', { title: 'Same words' }), object('prompt', 'c', { title: 'Same words' }), object('prompt', 'a', { title: 'Same words' })];
    const forward = SearchIndex.build(twins).search('same', { limit: 5 });
    expect(forward.map((hit) => hit.uri)).toEqual(['majordomus://prompt/a', 'majordomus://prompt/b', 'majordomus://prompt/c']);
    expect(SearchIndex.build([...twins].reverse()).search('same', { limit: 5 })).toEqual(forward);
    // A limit that cuts inside a tie keeps the first by uri.
    expect(SearchIndex.build([...twins].reverse()).search('same', { limit: 1 }).map((hit) => hit.uri)).toEqual(['majordomus://prompt/a']);
    expect(index.search('lease bridge', { limit: 10 })).toEqual(index.search('lease bridge', { limit: 10 }));
  });

  it('returns [] for a blank query, a query of punctuation, or a non-positive limit', () => {
    expect(index.search('', { limit: 10 })).toEqual([]);
    expect(index.search('   \t', { limit: 10 })).toEqual([]);
    expect(index.search('--- !!', { limit: 10 })).toEqual([]);
    expect(index.search('lease', { limit: 0 })).toEqual([]);
    expect(index.search('lease', { limit: -3 })).toEqual([]);
    expect(searchObjects(OBJECTS, 'zlutoucky', { limit: 5 }).map((hit) => hit.id)).toEqual(['document.czech']);
  });
});

describe('the combination of kept term results', () => {
  const words = ['lease', 'bridge', 'peer', 'snapshot', 'thread', 'pool', 'route', 'session', 'látency', 'schema', 'Žluťoučký'];
  const many = Array.from({ length: 600 }, (_, n) =>
    object((['rule', 'document', 'skill'] as const)[n % 3] as ObjectKind, `item-${String(n).padStart(3, '0')}`, {
      title: `Item ${words[n % words.length]} ${words[(n * 5) % words.length]}`,
      description: `${words[(n * 7) % words.length]} ${words[(n * 3) % words.length]}`,
      content: Array.from({ length: 1 + (n % 30) }, (_, k) => words[(n * 31 + k * 17) % words.length]).join(' '),
      tags: [words[(n * 11) % words.length] as string],
    }),
  );
  const queries = ['lease', 'lease bridge', 'bridge lease', 'pool thred latency', 'snapsh session', 'zlutoucky item', 'schema peer route lease'];

  const mini = MiniSearch.loadJS<IndexedDocument>(buildSearchIndex(many) as Parameters<typeof MiniSearch.loadJS>[0], MINISEARCH_OPTIONS);
  const byUri = new Map(many.map((o) => [o.uri, o]));

  /** What MiniSearch itself answers for the whole query, rounded and cut as SearchIndex does. */
  function reference(query: string, kind: ObjectKind | undefined, limit: number): Array<{ uri: string; score: number }> {
    return mini
      .search(query)
      .filter((r) => kind === undefined || byUri.get(r.id as string)?.kind === kind)
      .map((r) => ({ uri: r.id as string, score: Math.round(r.score * 1e6) / 1e6 }))
      .sort((a, b) => b.score - a.score || (a.uri < b.uri ? -1 : 1))
      .slice(0, limit);
  }

  it('scores a query as MiniSearch scores it whole, cold, again, and among queries sharing its terms', () => {
    const index = SearchIndex.build(many);
    for (let round = 0; round < 2; round++) {
      for (const query of queries) {
        for (const [kind, limit] of [[undefined, 10], [undefined, 200], ['skill', 7]] as const) {
          const hits = index.search(query, { kind, limit });
          expect(hits.length).toBeGreaterThan(0);
          expect(hits.map((hit) => ({ uri: hit.uri, score: hit.score }))).toEqual(reference(query, kind, limit));
        }
      }
    }
  });

  it('counts a repeated term once', () => {
    const index = SearchIndex.build(many);
    expect(index.search('lease LEASE lease', { limit: 20 })).toEqual(index.search('lease', { limit: 20 }));
  });

  it('scores each term from the postings exactly as MiniSearch.search does (exact, prefix, typos), to the last bit', () => {
    const ordinals = new Map(many.map((o, ordinal) => [o.uri, ordinal]));
    const scorer = new TermScorer(mini, ordinals);
    for (const term of ['lease', 'leas', 'lea', 'le', 'bridg', 'bridgee', 'thred', 'snapsh', 'latency', 'zlutoucky', 'item', 'schmea', 'nothing']) {
      const { objects, scores } = scorer.score(term);
      const mine = Array.from(objects, (ordinal, k) => ({ uri: many[ordinal]?.uri, score: scores[k] })).sort((a, b) => (a.uri as string).localeCompare(b.uri as string));
      const theirs = mini.search(term).map((r) => ({ uri: r.id as string, score: r.score })).sort((a, b) => a.uri.localeCompare(b.uri));
      expect(mine, term).toEqual(theirs);
    }
  });

  it('asks MiniSearch itself of an index with discarded documents not yet vacuumed', () => {
    const dirty = MiniSearch.loadJS<IndexedDocument>(buildSearchIndex(many) as Parameters<typeof MiniSearch.loadJS>[0], { ...MINISEARCH_OPTIONS, autoVacuum: false });
    dirty.discard(many[0]?.uri as string);
    const scorer = new TermScorer(dirty, new Map(many.map((o, ordinal) => [o.uri, ordinal])));
    const { objects, scores } = scorer.score('lease');
    const mine = Array.from(objects, (ordinal, k) => ({ uri: many[ordinal]?.uri, score: scores[k] })).sort((a, b) => (a.uri as string).localeCompare(b.uri as string));
    const theirs = dirty.search('lease').map((r) => ({ uri: r.id as string, score: r.score })).sort((a, b) => a.uri.localeCompare(b.uri));
    expect(mine).toEqual(theirs);
    expect(mine.map((hit) => hit.uri)).not.toContain(many[0]?.uri);
  });
});

describe('the serialized search index', () => {
  const queries = ['lease', 'lease bridge', 'RELEA', 'snapsot', 'zlutoucky kun', 'election workflow', 'same'];

  it('is plain JSON, and loaded from it answers exactly as a freshly built one', () => {
    const serialized = JSON.parse(JSON.stringify(buildSearchIndex(OBJECTS))) as unknown;
    const loaded = SearchIndex.load(serialized, OBJECTS);
    const fresh = SearchIndex.build(OBJECTS);
    for (const query of queries) {
      for (const kind of [undefined, 'rule', 'document'] as const) {
        expect(loaded.search(query, { kind, limit: 3 })).toEqual(fresh.search(query, { kind, limit: 3 }));
        expect(loaded.search(query, { kind, limit: 200 })).toEqual(fresh.search(query, { kind, limit: 200 }));
      }
    }
    // The same terms and counts (the loaded tree may list its terms in another order).
    const terms = (data: unknown): unknown => {
      const { index, ...rest } = data as { index: Array<[string, unknown]> };
      return { ...rest, index: [...index].sort(([a], [b]) => (a < b ? -1 : 1)) };
    };
    expect(terms(JSON.parse(JSON.stringify(loaded.toJSON())))).toEqual(terms(serialized));
  });

  it('answers alike on a larger layer, loaded or fresh, and ranks and limits its hits', () => {
    const words = ['lease', 'bridge', 'peer', 'snapshot', 'thread', 'pool', 'route', 'session', 'látency', 'schema'];
    const many = Array.from({ length: 2000 }, (_, n) =>
      object(n % 3 === 0 ? 'rule' : 'document', `doc-${String(n).padStart(4, '0')}`, {
        title: `Document ${n} ${words[n % words.length]}`,
        description: `${words[(n * 7) % words.length]} ${words[(n * 3) % words.length]}`,
        content: Array.from({ length: 40 }, (_, k) => words[(n * 31 + k * 17) % words.length]).join(' '),
        tags: [words[(n * 11) % words.length] as string],
      }),
    );
    const fresh = SearchIndex.build(many);
    const loaded = SearchIndex.load(JSON.parse(JSON.stringify(buildSearchIndex(many))), many);
    for (const query of ['lease', 'latency snapshot', 'sesion', 'thre', 'document 42']) {
      const hits = fresh.search(query, { limit: 20 });
      expect(hits).toHaveLength(20);
      expect(loaded.search(query, { limit: 20 })).toEqual(hits);
      expect(loaded.search(query, { kind: 'rule', limit: 50 })).toEqual(fresh.search(query, { kind: 'rule', limit: 50 }));
      for (let k = 1; k < hits.length; k++) {
        const [a, b] = [hits[k - 1], hits[k]] as [{ score: number; uri: string }, { score: number; uri: string }];
        expect(a.score > b.score || (a.score === b.score && a.uri < b.uri)).toBe(true);
      }
    }
    expect(fresh.search('document 42', { limit: 1 })[0]?.id).toBe('rule.doc-0042');
  });

  it('is rebuilt from the objects when it is not an index or holds other objects', () => {
    const fresh = SearchIndex.build(OBJECTS);
    const stale = buildSearchIndex(OBJECTS.slice(0, 3));
    // As many objects, one of them another: the index must not answer for the layer.
    const renamed = buildSearchIndex([...OBJECTS.slice(0, -1), object('skill', 'renamed', { title: 'Renamed' })]);
    for (const serialized of [stale, renamed, { not: 'an index' }, null, 'text']) {
      expect(SearchIndex.load(serialized, OBJECTS).search('zlutoucky lease snapshot', { limit: 10 })).toEqual(fresh.search('zlutoucky lease snapshot', { limit: 10 }));
    }
  });
});

describe('the live search index', () => {
  const words = ['lease', 'bridge', 'peer', 'snapshot', 'thread', 'pool', 'route', 'session', 'látency', 'schema', 'release'];

  function randomObject(pick: () => number, n: number): LayerObject {
    const word = (): string => words[Math.floor(pick() * words.length)] as string;
    const kind = pick() < 0.4 ? 'rule' : 'document';
    return object(kind, `doc-${String(n).padStart(3, '0')}`, {
      title: `${word()} ${pick() < 0.5 ? word() : ''}`.trim(),
      description: pick() < 0.3 ? '' : `${word()} ${word()}`,
      content: Array.from({ length: Math.floor(pick() * 30) }, word).join(' '),
      tags: pick() < 0.5 ? [] : [word()],
    });
  }

  /** Postings by uri rather than internal id, and the lengths: what answers depend on. */
  function meaning(serialized: unknown): unknown {
    const data = serialized as {
      documentCount: number;
      documentIds: Record<string, string>;
      fieldLength: Record<string, number[]>;
      averageFieldLength: number[];
      index: Array<[string, Record<string, Record<string, number>>]>;
    };
    const uri = (shortId: string): string => data.documentIds[shortId] as string;
    const postings = data.index
      .map(([term, fields]) => {
        const byField = Object.entries(fields).map(([field, freqs]) => {
          const live = Object.entries(freqs).filter(([shortId]) => shortId in data.documentIds);
          return [field, live.map(([shortId, tf]) => [uri(shortId), tf]).sort()] as const;
        });
        return [term, byField.filter(([, freqs]) => freqs.length > 0).sort()] as const;
      })
      .filter(([, fields]) => fields.length > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    const lengths = Object.entries(data.fieldLength).map(([shortId, lengths]) => [uri(shortId), lengths]).sort();
    return { count: data.documentCount, averages: data.averageFieldLength, lengths, postings };
  }

  it('answers exactly as a fresh build after each of 60 seeded random updates', () => {
    const pick = seeded(2026);
    let objects = Array.from({ length: 30 }, (_, n) => randomObject(pick, n)).sort((a, b) => (a.uri < b.uri ? -1 : 1));
    const live = LiveSearchIndex.build(objects);
    const queries = ['lease', 'lease bridge', 'relea', 'snapsot', 'latency schema', 'sesion pool route', 'doc'];
    for (let step = 0; step < 60; step++) {
      const next = new Map(objects.map((o) => [o.uri, o]));
      for (let k = Math.floor(pick() * 4); k >= 0; k--) {
        const n = Math.floor(pick() * 45);
        const made = randomObject(pick, n);
        if (next.has(made.uri) && pick() < 0.35) next.delete(made.uri);
        else next.set(made.uri, made);
      }
      objects = [...next.values()].sort((a, b) => (a.uri < b.uri ? -1 : 1));
      live.update(objects);
      const serialized = JSON.parse(JSON.stringify(live.toJSON())) as unknown;
      const freshSerialized = buildSearchIndex(objects);
      expect(meaning(serialized), `step ${step}`).toEqual(meaning(freshSerialized));
      // Loaded as it is (not rebuilt because it does not hold the objects)…
      const raw = MiniSearch.loadJS<IndexedDocument>(serialized as Parameters<typeof MiniSearch.loadJS>[0], MINISEARCH_OPTIONS);
      expect(raw.documentCount).toBe(objects.length);
      expect(objects.every((o) => raw.has(o.uri))).toBe(true);
      // …it answers as the fresh one does.
      const loaded = SearchIndex.load(serialized, objects);
      const fresh = SearchIndex.load(freshSerialized, objects);
      for (const query of queries) {
        expect(loaded.search(query, { limit: 100 }), `step ${step}: ${query}`).toEqual(fresh.search(query, { limit: 100 }));
        expect(loaded.search(query, { kind: 'rule', limit: 5 })).toEqual(fresh.search(query, { kind: 'rule', limit: 5 }));
      }
    }
  });

  it('touches only what changed, and starts from a serialized index that holds its objects', () => {
    const live = LiveSearchIndex.load(buildSearchIndex(OBJECTS), OBJECTS);
    expect(live.update(OBJECTS)).toBe(0);
    const changed = OBJECTS.map((o) => (o.identity === 'notes' ? { ...o, content: 'now about snapshots' } : o));
    expect(live.update(changed)).toBe(1);
    expect(live.update(changed.slice(1))).toBe(1);
    expect(SearchIndex.load(live.toJSON(), changed.slice(1)).search('snapshots', { limit: 5 })).toEqual(SearchIndex.build(changed.slice(1)).search('snapshots', { limit: 5 }));
    // A stale start is rebuilt from the objects.
    const fromStale = LiveSearchIndex.load(buildSearchIndex(OBJECTS.slice(0, 2)), OBJECTS);
    expect(meaning(fromStale.toJSON())).toEqual(meaning(buildSearchIndex(OBJECTS)));
  });
});

describe('the layer view', () => {
  const layer: LayerIndex = { repository_id: 'r', root: '/nowhere', localPath: '.ai/local', discovery: 'filesystem', state: 'ok', objects: OBJECTS, diagnostics: [], sections: [] };

  it('builds its search index at the first search, and hands out its serialized form', () => {
    const view = createLayerView(layer);
    expect(ids(view.search('zlutoucky kun', { limit: 5 }))).toEqual(['document.czech']);
    const serialized = view.searchIndex();
    expect(view.searchIndex()).toBe(serialized);
    expect(JSON.stringify(serialized)).toBe(JSON.stringify(buildSearchIndex(OBJECTS)));
  });

  it('loads the serialized index it is given, and hands that one on unchanged', () => {
    const serialized = JSON.parse(JSON.stringify(buildSearchIndex(OBJECTS))) as unknown;
    const view = createLayerView(layer, serialized);
    expect(view.searchIndex()).toBe(serialized);
    expect(view.search('lease', { kind: 'workflow', limit: 5 })).toEqual(createLayerView(layer).search('lease', { kind: 'workflow', limit: 5 }));
  });
});
