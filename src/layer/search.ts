/**
 * Full-text search over layer objects with MiniSearch (docs/DECISIONS.md, "Search"): BM25+
 * ranking over five fields boosted title > identity > tags > description > content, prefix and
 * bounded typo-tolerant matching, and terms folded to lower case without accents on both sides
 * ("zlutoucky kun" finds "Žluťoučký kůň"). The index is built once per layer generation; its
 * plain-JSON form travels in the snapshot, so every thread loads it instead of building it again.
 * Each term's results are kept per thread, so a common term costs its postings once per index.
 * Scores are rounded and ties ordered by uri, so equal queries give equal answers everywhere.
 */
import MiniSearch, { type Options } from 'minisearch';
import { TermScorer, type TermScores } from './term-scorer.js';
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
export type IndexedDocument = { uri: string } & Record<Field, string>;

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

/** MiniSearch's options for building, loading and searching the index. */
export const MINISEARCH_OPTIONS: Options<IndexedDocument> = {
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
  const index = new MiniSearch<IndexedDocument>(MINISEARCH_OPTIONS);
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

/**
 * Term results kept per thread, counted in entries (12 bytes each): a term found in every
 * object of a 5,000-object layer costs 60 kB, and the whole cache at most ~12 MB.
 */
const TERM_CACHE_ENTRIES = 1_000_000;

/**
 * A loaded search index over the objects it was built from.
 *
 * A query is scored as MiniSearch scores an OR query — the sum of each term's score (prefix and
 * typo matches included), times the number of query terms the object matched — but each term's
 * results are asked of MiniSearch alone and kept: the layer is immutable for the life of the
 * index, so a term's results never change, and the costly terms (those found in most objects,
 * thousands of postings each) are the ones queries share. Combining kept lists is a pass over
 * typed arrays.
 */
export class SearchIndex {
  readonly #index: MiniSearch<IndexedDocument>;
  readonly #objects: readonly LayerObject[];
  readonly #scorer: TermScorer;
  readonly #terms = new Map<string, TermScores>();
  #termEntries = 0;
  /** Per-object scratch for combining terms; zeroed again after each search. */
  readonly #sums: Float64Array;
  readonly #matched: Uint16Array;

  private constructor(index: MiniSearch<IndexedDocument>, objects: readonly LayerObject[]) {
    this.#index = index;
    this.#objects = objects;
    this.#scorer = new TermScorer(index, new Map(objects.map((object, ordinal) => [object.uri, ordinal])));
    this.#sums = new Float64Array(objects.length);
    this.#matched = new Uint16Array(objects.length);
  }

  static build(objects: readonly LayerObject[]): SearchIndex {
    return new SearchIndex(build(objects), objects);
  }

  /**
   * Loads a serialized index (from `buildSearchIndex`) over the same objects. One that cannot be
   * loaded, or that holds other objects, is rebuilt from `objects`: a stale or foreign index
   * must not answer.
   */
  static load(serialized: unknown, objects: readonly LayerObject[]): SearchIndex {
    try {
      const index = MiniSearch.loadJS<IndexedDocument>(serialized as Parameters<typeof MiniSearch.loadJS>[0], MINISEARCH_OPTIONS);
      if (index.documentCount === objects.length && objects.every((object) => index.has(object.uri))) return new SearchIndex(index, objects);
    } catch {
      // Not an index of this format: rebuilt below.
    }
    return new SearchIndex(build(objects), objects);
  }

  /** Serialized form, as `buildSearchIndex` gives it. */
  toJSON(): unknown {
    return this.#index.toJSON();
  }

  /** Objects matching any term of `query`, best first (score desc, then uri); [] for a blank query. */
  search(query: string, options: SearchOptions): SearchHit[] {
    const limit = Math.floor(options.limit);
    const terms = queryTerms(query);
    if (!(limit > 0) || terms.length === 0) return [];
    const lists = terms.map((term) => this.#termScores(term));

    const sums = this.#sums;
    const matched = this.#matched;
    const touched: number[] = [];
    for (const { objects, scores } of lists) {
      for (let k = 0; k < objects.length; k++) {
        const ordinal = objects[k] as number;
        if (matched[ordinal] === 0) {
          touched.push(ordinal);
          sums[ordinal] = scores[k] as number;
        } else {
          sums[ordinal] = (sums[ordinal] as number) + (scores[k] as number);
        }
        matched[ordinal] = (matched[ordinal] as number) + 1;
      }
    }
    const candidates: number[] = [];
    const rounded = new Float64Array(touched.length);
    for (const ordinal of touched) {
      if (options.kind === undefined || this.#objects[ordinal]?.kind === options.kind) {
        rounded[candidates.length] = Math.round((sums[ordinal] as number) * (matched[ordinal] as number) * SCORE_DECIMALS) / SCORE_DECIMALS;
        candidates.push(ordinal);
      }
      sums[ordinal] = 0;
      matched[ordinal] = 0;
    }
    // Keep the candidates scoring at least the limit-th best score (ties included), then order.
    const scored = rounded.subarray(0, candidates.length);
    const threshold = candidates.length > limit ? (Float64Array.from(scored).sort()[candidates.length - limit] as number) : -Infinity;
    const hits: SearchHit[] = [];
    candidates.forEach((ordinal, k) => {
      const score = scored[k] as number;
      if (score < threshold) return;
      const object = this.#objects[ordinal] as LayerObject;
      hits.push({ uri: object.uri, id: object.id, kind: object.kind, title: object.title, description: object.description, score });
    });
    hits.sort(byScoreThenUri);
    return hits.length > limit ? hits.slice(0, limit) : hits;
  }

  /** One folded term's results, kept (least recently used dropped first). */
  #termScores(term: string): TermScores {
    const kept = this.#terms.get(term);
    if (kept !== undefined) {
      this.#terms.delete(term);
      this.#terms.set(term, kept);
      return kept;
    }
    const entry = this.#scorer.score(term);
    this.#terms.set(term, entry);
    this.#termEntries += entry.objects.length;
    for (const [oldest, dropped] of this.#terms) {
      if (this.#termEntries <= TERM_CACHE_ENTRIES || oldest === term) break;
      this.#terms.delete(oldest);
      this.#termEntries -= dropped.objects.length;
    }
    return entry;
  }
}

/** One-off search over `objects` (builds an index each call: for tests and tools, not for serving). */
export function searchObjects(objects: readonly LayerObject[], query: string, options: SearchOptions): SearchHit[] {
  return SearchIndex.build(objects).search(query, options);
}

function sameDocument(a: IndexedDocument, b: IndexedDocument): boolean {
  return a.title === b.title && a.identity === b.identity && a.tags === b.tags && a.description === b.description && a.content === b.content;
}

/** The parts of MiniSearch's serialized form that `LiveSearchIndex` adjusts. */
interface SerializedLengths {
  documentIds: Record<string, string>;
  fieldLength: Record<string, number[]>;
  averageFieldLength: number[];
}

/**
 * A search index kept alive from one generation to the next (by the layer build worker): each
 * update discards, replaces and adds only the objects that changed, so a reload costs what changed
 * rather than the whole layer. Its serialized form answers exactly as `buildSearchIndex` of the
 * same objects: the internal document ids differ, and the average field lengths (which MiniSearch
 * keeps as a running mean, so they would carry the history of removals) are recomputed in the
 * order a fresh build adds the objects.
 */
export class LiveSearchIndex {
  readonly #index: MiniSearch<IndexedDocument>;
  #documents: Map<string, IndexedDocument>;
  #order: readonly LayerObject[];

  private constructor(index: MiniSearch<IndexedDocument>, objects: readonly LayerObject[]) {
    this.#index = index;
    this.#documents = new Map(objects.map((object) => [object.uri, documentOf(object)]));
    this.#order = objects;
  }

  static build(objects: readonly LayerObject[]): LiveSearchIndex {
    return new LiveSearchIndex(build(objects), objects);
  }

  /** Starts from a serialized index of `objects` (a snapshot's); one that does not hold them is rebuilt. */
  static load(serialized: unknown, objects: readonly LayerObject[]): LiveSearchIndex {
    try {
      const index = MiniSearch.loadJS<IndexedDocument>(serialized as Parameters<typeof MiniSearch.loadJS>[0], MINISEARCH_OPTIONS);
      const built = new LiveSearchIndex(index, objects);
      if (index.documentCount === objects.length && objects.every((object) => index.has(object.uri))) return built;
    } catch {
      // Not an index of this format: rebuilt below.
    }
    return LiveSearchIndex.build(objects);
  }

  /** Makes the index hold exactly `objects`; returns how many documents were removed, replaced or added. */
  update(objects: readonly LayerObject[]): number {
    const next = new Map<string, IndexedDocument>();
    for (const object of objects) next.set(object.uri, documentOf(object));
    let touched = 0;
    for (const [uri, previous] of this.#documents) {
      const current = next.get(uri);
      if (current !== undefined && sameDocument(previous, current)) continue;
      this.#index.remove(previous);
      touched += 1;
    }
    for (const [uri, current] of next) {
      const previous = this.#documents.get(uri);
      if (previous !== undefined && sameDocument(previous, current)) continue;
      this.#index.add(current);
      if (previous === undefined) touched += 1;
    }
    this.#documents = next;
    this.#order = objects;
    return touched;
  }

  /** The serialized form, answering as `buildSearchIndex` of the objects last given does. */
  toJSON(): unknown {
    const serialized = this.#index.toJSON() as unknown as SerializedLengths;
    const shortIds = new Map<string, string>();
    for (const [shortId, uri] of Object.entries(serialized.documentIds)) shortIds.set(uri, shortId);
    const averages: number[] = [];
    this.#order.forEach((object, count) => {
      const lengths = serialized.fieldLength[shortIds.get(object.uri) as string] ?? [];
      lengths.forEach((length, field) => {
        // MiniSearch's own running mean, in the order a fresh build adds the objects.
        averages[field] = ((averages[field] ?? 0) * count + length) / (count + 1);
      });
    });
    serialized.averageFieldLength = averages;
    return serialized;
  }
}
