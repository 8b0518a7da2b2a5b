/**
 * Full-text search over layer objects with MiniSearch (docs/DECISIONS.md, "Search"): BM25+
 * ranking over five fields boosted title > identity > tags > description > content, prefix and
 * bounded typo-tolerant matching, and terms folded to lower case without accents on both sides
 * ("zlutoucky kun" finds "Žluťoučký kůň"). The index is built once per layer generation; its
 * plain-JSON form travels in the snapshot, so every thread loads it instead of building it again.
 * Scores are rounded and ties ordered by uri, so equal queries give equal answers everywhere.
 */
import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import type { LayerObject, ObjectKind } from './types.js';

/** One search result. */
export interface SearchHit {
  uri: string;
  id: string;
  kind: ObjectKind;
  title: string;
  description: string;
  score: number;
}

export interface SearchOptions {
  kind?: ObjectKind;
  limit: number;
}

/** How much a match in each field counts, relative to one in the content. */
export const SEARCH_FIELD_BOOSTS = { title: 5, identity: 3, tags: 2, description: 1.5, content: 1 } as const;

type Field = keyof typeof SEARCH_FIELD_BOOSTS;
type IndexedDocument = { uri: string } & Record<Field, string>;

/** Scores keep this many decimals: enough to rank, few enough that every thread prints the same. */
const SCORE_DECIMALS = 1e6;

const WORD_SEPARATORS = /[^\p{L}\p{N}\p{M}]+/u;
const COMBINING_MARKS = /\p{M}+/gu;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Runs of letters and digits (marks stay with their letter until folding strips them). */
function tokenize(text: string): string[] {
  return text.split(WORD_SEPARATORS).filter((token) => token !== '');
}

/** Lower case without accents: NFD, then the combining marks dropped ("Kůň" → "kun"). */
export function foldTerm(term: string): string {
  if (ASCII_ONLY.test(term)) return term.toLowerCase();
  return term.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase();
}

/** The distinct folded terms of a query, in order; [] when it holds no letter or digit. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query).map(foldTerm).filter((term) => term !== ''))];
}

/**
 * Edits allowed for a query term: none up to 4 characters (short words stay exact, "pool" does
 * not find "tool"), one up to 8, two beyond.
 */
export function typoTolerance(term: string): number {
  return term.length <= 4 ? 0 : term.length <= 8 ? 1 : 2;
}

/** A term of 3 or more characters also finds the words it begins ("relea" finds "release"). */
const MIN_PREFIX_LENGTH = 3;

const OPTIONS: Options<IndexedDocument> = {
  idField: 'uri',
  fields: Object.keys(SEARCH_FIELD_BOOSTS),
  tokenize,
  processTerm: (term) => foldTerm(term) || null,
  searchOptions: {
    boost: { ...SEARCH_FIELD_BOOSTS },
    prefix: (term) => term.length >= MIN_PREFIX_LENGTH,
    fuzzy: (term) => typoTolerance(term),
    maxFuzzy: 2,
    combineWith: 'OR',
  },
};

function documentOf(object: LayerObject): IndexedDocument {
  return {
    uri: object.uri,
    title: object.title,
    identity: object.identity,
    tags: object.tags.join(' '),
    description: object.description,
    content: object.content,
  };
}

function build(objects: readonly LayerObject[]): MiniSearch<IndexedDocument> {
  const index = new MiniSearch<IndexedDocument>(OPTIONS);
  index.addAll(objects.map(documentOf));
  return index;
}

/**
 * The search index of `objects` in its plain-JSON form (MiniSearch's serialization), to be put
 * in the snapshot and loaded by `SearchIndex.load`.
 */
export function buildSearchIndex(objects: readonly LayerObject[]): unknown {
  return build(objects).toJSON();
}

const byScoreThenUri = (a: SearchHit, b: SearchHit): number => b.score - a.score || (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0);

/** A loaded search index over the objects it was built from. */
export class SearchIndex {
  readonly #index: MiniSearch<IndexedDocument>;
  readonly #objects: ReadonlyMap<string, LayerObject>;

  private constructor(index: MiniSearch<IndexedDocument>, objects: ReadonlyMap<string, LayerObject>) {
    this.#index = index;
    this.#objects = objects;
  }

  static build(objects: readonly LayerObject[]): SearchIndex {
    return new SearchIndex(build(objects), mapByUri(objects));
  }

  /**
   * Loads a serialized index (from `buildSearchIndex`) over the same objects. One that cannot be
   * loaded, or that counts other objects, is rebuilt from `objects`: a stale or foreign index
   * must not answer.
   */
  static load(serialized: unknown, objects: readonly LayerObject[]): SearchIndex {
    const byUri = mapByUri(objects);
    try {
      const index = MiniSearch.loadJS<IndexedDocument>(serialized as Parameters<typeof MiniSearch.loadJS>[0], OPTIONS);
      if (index.documentCount === objects.length) return new SearchIndex(index, byUri);
    } catch {
      // Not an index of this format: rebuilt below.
    }
    return new SearchIndex(build(objects), byUri);
  }

  /** Serialized form, as `buildSearchIndex` gives it. */
  toJSON(): unknown {
    return this.#index.toJSON();
  }

  /** Objects matching any term of `query`, best first (score desc, then uri); [] for a blank query. */
  search(query: string, options: SearchOptions): SearchHit[] {
    const limit = Math.floor(options.limit);
    if (!(limit > 0) || queryTerms(query).length === 0) return [];
    const { kind } = options;
    const filter = kind === undefined ? undefined : (result: SearchResult) => this.#objects.get(result.id as string)?.kind === kind;
    const results = this.#index.search(query, filter === undefined ? {} : { filter });
    // Results come by raw score; rounding can only make neighbours equal. Keep every hit that ties
    // with the last one kept, then order ties by uri and cut.
    const hits: SearchHit[] = [];
    for (const result of results) {
      const object = this.#objects.get(result.id as string);
      if (object === undefined) continue;
      const score = Math.round(result.score * SCORE_DECIMALS) / SCORE_DECIMALS;
      if (hits.length >= limit && score !== hits[hits.length - 1]?.score) break;
      hits.push({ uri: object.uri, id: object.id, kind: object.kind, title: object.title, description: object.description, score });
    }
    hits.sort(byScoreThenUri);
    return hits.length > limit ? hits.slice(0, limit) : hits;
  }
}

function mapByUri(objects: readonly LayerObject[]): Map<string, LayerObject> {
  return new Map(objects.map((object) => [object.uri, object]));
}

/** One-off search over `objects` (builds an index each call: for tests and tools, not for serving). */
export function searchObjects(objects: readonly LayerObject[], query: string, options: SearchOptions): SearchHit[] {
  return SearchIndex.build(objects).search(query, options);
}
