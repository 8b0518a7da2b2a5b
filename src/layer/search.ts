/**
 * Term search over layer objects: case-insensitive matching of terms at the start of a word,
 * weighted by where a term is found (title most, content least), ranked by score then uri so equal queries give equal
 * answers. The lower-cased text of each object is computed once and kept in a WeakMap, so a
 * search over thousands of objects is one pass of `indexOf` per term.
 */
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

/** Points a term earns for each place it is found. */
export const SEARCH_WEIGHTS = {
  title: 10,
  identity: 6,
  tagExact: 5,
  tagPartial: 3,
  description: 3,
  /** Per occurrence in the content, up to CONTENT_OCCURRENCE_CAP occurrences. */
  content: 1,
  /** When a query of several terms appears as written in the title. */
  titlePhrase: 5,
} as const;

const CONTENT_OCCURRENCE_CAP = 5;

interface Folded {
  title: string;
  identity: string;
  tags: string[];
  description: string;
  content: string;
}

const folded = new WeakMap<LayerObject, Folded>();

function fold(object: LayerObject): Folded {
  let entry = folded.get(object);
  if (entry === undefined) {
    entry = {
      title: object.title.toLowerCase(),
      identity: object.identity.toLowerCase(),
      tags: object.tags.map((tag) => tag.toLowerCase()),
      description: object.description.toLowerCase(),
      content: object.content.toLowerCase(),
    };
    folded.set(object, entry);
  }
  return entry;
}

/** The distinct lower-case terms of a query: runs of letters and digits. */
export function queryTerms(query: string): string[] {
  return [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((term) => term !== ''))];
}

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * How many times `needle` starts a word of `haystack` (up to `cap`): "lease" finds "lease" and
 * "leases" but not "release", and a prefix such as "capab" finds "capability".
 */
function occurrences(haystack: string, needle: string, cap: number): number {
  let count = 0;
  let from = haystack.indexOf(needle);
  while (from !== -1 && count < cap) {
    if (from === 0 || !WORD_CHARACTER.test(haystack[from - 1] ?? '')) count += 1;
    from = haystack.indexOf(needle, from + 1);
  }
  return count;
}

function startsWord(haystack: string, needle: string): boolean {
  return occurrences(haystack, needle, 1) > 0;
}

function scoreOf(text: Folded, terms: readonly string[], phrase: string): number {
  let score = 0;
  for (const term of terms) {
    if (startsWord(text.title, term)) score += SEARCH_WEIGHTS.title;
    if (startsWord(text.identity, term)) score += SEARCH_WEIGHTS.identity;
    if (text.tags.includes(term)) score += SEARCH_WEIGHTS.tagExact;
    else if (text.tags.some((tag) => startsWord(tag, term))) score += SEARCH_WEIGHTS.tagPartial;
    if (startsWord(text.description, term)) score += SEARCH_WEIGHTS.description;
    score += SEARCH_WEIGHTS.content * occurrences(text.content, term, CONTENT_OCCURRENCE_CAP);
  }
  if (terms.length > 1 && text.title.includes(phrase)) score += SEARCH_WEIGHTS.titlePhrase;
  return score;
}

/** Objects matching any term of `query`, best first (score desc, then uri); [] for a blank query. */
export function searchObjects(objects: readonly LayerObject[], query: string, options: SearchOptions): SearchHit[] {
  const limit = Math.floor(options.limit);
  const terms = queryTerms(query);
  if (terms.length === 0 || !(limit > 0)) return [];
  const phrase = query.trim().toLowerCase().replace(/\s+/g, ' ');

  const hits: SearchHit[] = [];
  for (const object of objects) {
    if (options.kind !== undefined && object.kind !== options.kind) continue;
    const score = scoreOf(fold(object), terms, phrase);
    if (score === 0) continue;
    hits.push({ uri: object.uri, id: object.id, kind: object.kind, title: object.title, description: object.description, score });
  }
  hits.sort((a, b) => b.score - a.score || (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  return hits.length > limit ? hits.slice(0, limit) : hits;
}
