/**
 * One query term's scores, computed from a MiniSearch index's own postings as MiniSearch scores
 * them — the exact term, the words it begins, the words within its typo tolerance, each field's
 * BM25+ times its boost and the match's weight, added in MiniSearch's order, so every score is the
 * same number `MiniSearch.search(term)` answers — but written straight into typed arrays.
 *
 * Why not ask MiniSearch: for each matching document its `search` builds a result object with the
 * matched terms and fields, copies the stored fields and sorts them all. A term found in every one
 * of 5,000 documents cost 5–25 ms that way the first time it was asked of an index (issue 23: the
 * first query on a freshly loaded index took 48–83 ms); scoring the same postings into arrays
 * costs a fraction of it.
 *
 * This reads MiniSearch's internals (`_index`, `_fieldIds`, `_fieldLength`, `_avgFieldLength`,
 * `_documentCount`, `_documentIds`, `_options`) of the exact version package.json pins;
 * tests/unit/layer/search.test.ts checks the scores against MiniSearch's own answers, so an
 * upgrade that changes them fails there. An index with discarded documents not yet vacuumed (the
 * layer's indexes never have any) is asked of MiniSearch instead.
 */
import type MiniSearch from 'minisearch';

/** One query term's results: object ordinals and their scores, in no particular order. */
export interface TermScores {
  readonly objects: Int32Array;
  readonly scores: Float64Array;
}

/** A term's postings: field id → document short id → term frequency. */
type FieldTermData = Map<number, Map<number, number>>;

interface Postings {
  get(term: string): FieldTermData | undefined;
  atPrefix(prefix: string): Iterable<[string, FieldTermData]>;
  fuzzyGet(term: string, maxDistance: number): Map<string, [FieldTermData, number]>;
}

type TermRule = (term: string, index: number, terms: string[]) => boolean | number;

/** What of MiniSearch's inside the scoring reads (minisearch 7.2.0). */
interface MiniSearchInternals {
  _index: Postings;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _documentIds: Map<number, unknown>;
  _dirtCount: number;
  _options: {
    fields: string[];
    searchOptions: {
      fields?: string[];
      boost?: Record<string, number>;
      prefix?: boolean | TermRule;
      fuzzy?: boolean | number | TermRule;
      maxFuzzy: number;
      boostTerm?: unknown;
      boostDocument?: unknown;
      weights?: { fuzzy?: number; prefix?: number };
      bm25: { k: number; b: number; d: number };
    };
  };
}

/** MiniSearch's weights for a prefix and a typo-tolerant match when none are given. */
const DEFAULT_WEIGHTS = { fuzzy: 0.45, prefix: 0.375 };

export class TermScorer {
  readonly #index: MiniSearch;
  readonly #inside: MiniSearchInternals;
  readonly #ordinals: ReadonlyMap<string, number>;
  /** Document short id → object ordinal (-1: not one of the objects). */
  readonly #ordinalOf: Int32Array;
  /** Per short id scratch: the score so far, and whether the document was met. */
  readonly #sums: Float64Array;
  readonly #met: Uint8Array;
  readonly #fields: ReadonlyArray<{ id: number; boost: number }>;
  readonly #weights: { fuzzy: number; prefix: number };

  constructor(index: MiniSearch, ordinals: ReadonlyMap<string, number>) {
    this.#index = index;
    this.#ordinals = ordinals;
    this.#inside = index as unknown as MiniSearchInternals;
    const inside = this.#inside;
    let size = 0;
    for (const shortId of inside._documentIds.keys()) size = Math.max(size, shortId + 1);
    this.#ordinalOf = new Int32Array(size).fill(-1);
    for (const [shortId, id] of inside._documentIds) this.#ordinalOf[shortId] = ordinals.get(id as string) ?? -1;
    this.#sums = new Float64Array(size);
    this.#met = new Uint8Array(size);
    const options = inside._options.searchOptions;
    this.#fields = (options.fields ?? inside._options.fields).map((field) => ({ id: inside._fieldIds[field] as number, boost: options.boost?.[field] || 1 }));
    this.#weights = { ...DEFAULT_WEIGHTS, ...options.weights };
  }

  /** The scores of one folded query term (a single word, as `queryTerms` gives it). */
  score(term: string): TermScores {
    const inside = this.#inside;
    const options = inside._options.searchOptions;
    if (inside._dirtCount > 0 || options.boostTerm !== undefined || options.boostDocument !== undefined) return this.#asked(term);
    const touched: number[] = [];
    this.#add(inside._index.get(term), 1, touched);
    const prefix = typeof options.prefix === 'function' ? options.prefix(term, 0, [term]) : options.prefix === true;
    const fuzzyRule = typeof options.fuzzy === 'function' ? options.fuzzy(term, 0, [term]) : (options.fuzzy ?? false);
    let fuzzyMatches: Map<string, [FieldTermData, number]> | undefined;
    if (fuzzyRule) {
      const fuzzy = fuzzyRule === true ? 0.2 : Number(fuzzyRule);
      const maxDistance = fuzzy < 1 ? Math.min(options.maxFuzzy, Math.round(term.length * fuzzy)) : fuzzy;
      if (maxDistance) fuzzyMatches = inside._index.fuzzyGet(term, maxDistance);
    }
    if (prefix) {
      for (const [word, data] of inside._index.atPrefix(term)) {
        const distance = word.length - term.length;
        if (!distance) continue;
        // Scored as a prefix match, never again as a typo.
        fuzzyMatches?.delete(word);
        this.#add(data, (this.#weights.prefix * word.length) / (word.length + 0.3 * distance), touched);
      }
    }
    if (fuzzyMatches) {
      for (const [word, [data, distance]] of fuzzyMatches) {
        if (!distance) continue;
        this.#add(data, (this.#weights.fuzzy * word.length) / (word.length + distance), touched);
      }
    }
    const objects = new Int32Array(touched.length);
    const scores = new Float64Array(touched.length);
    let count = 0;
    for (const shortId of touched) {
      const ordinal = this.#ordinalOf[shortId] as number;
      if (ordinal >= 0) {
        objects[count] = ordinal;
        scores[count] = this.#sums[shortId] as number;
        count += 1;
      }
      this.#sums[shortId] = 0;
      this.#met[shortId] = 0;
    }
    return { objects: objects.subarray(0, count), scores: scores.subarray(0, count) };
  }

  /** One matched word's postings, weighted, added field by field as MiniSearch adds them. */
  #add(data: FieldTermData | undefined, weight: number, touched: number[]): void {
    if (data === undefined) return;
    const inside = this.#inside;
    const { k, b, d } = inside._options.searchOptions.bm25;
    const total = inside._documentCount;
    for (const field of this.#fields) {
      const frequencies = data.get(field.id);
      if (frequencies === undefined) continue;
      const matching = frequencies.size;
      const averageLength = inside._avgFieldLength[field.id] as number;
      const inverseFrequency = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
      for (const [shortId, frequency] of frequencies) {
        const length = (inside._fieldLength.get(shortId) as number[])[field.id] as number;
        const raw = inverseFrequency * (d + (frequency * (k + 1)) / (frequency + k * (1 - b + (b * length) / averageLength)));
        // MiniSearch's product, in its order (a term boost and a document boost of 1 change nothing).
        const weighted = weight * field.boost * raw;
        if (this.#met[shortId] === 0) {
          this.#met[shortId] = 1;
          this.#sums[shortId] = weighted;
          touched.push(shortId);
        } else {
          this.#sums[shortId] = (this.#sums[shortId] as number) + weighted;
        }
      }
    }
  }

  /** MiniSearch's own answer, for an index this scoring does not cover. */
  #asked(term: string): TermScores {
    const results = this.#index.search(term);
    const objects = new Int32Array(results.length);
    const scores = new Float64Array(results.length);
    let count = 0;
    for (const result of results) {
      const ordinal = this.#ordinals.get(result.id as string);
      if (ordinal === undefined) continue;
      objects[count] = ordinal;
      scores[count] = result.score;
      count += 1;
    }
    return { objects: objects.subarray(0, count), scores: scores.subarray(0, count) };
  }
}
