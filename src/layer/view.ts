/**
 * A read-only view of a built index with the lookups handlers need. Built once per thread from
 * the index (or from the snapshot), never per call. The search index is made at the first search
 * (or when `loadSearch` asks): loaded from the serialized one the snapshot carries, or built when
 * none was given.
 */
import { SearchIndex, type SearchHit } from './search.js';
import type { LayerIndex, LayerObject, ObjectKind } from './types.js';

export interface LayerView {
  readonly index: LayerIndex;
  get(uri: string): LayerObject | undefined;
  list(filter: { kind?: ObjectKind; tag?: string }): LayerObject[];
  search(query: string, options: { kind?: ObjectKind; limit: number }): SearchHit[];
  /** The serialized search index for a snapshot (`buildSearchIndex`'s form): the one given, or this view's. */
  searchIndex(): unknown;
  /**
   * Loads (or builds) the search index now instead of at the first search: a thread that serves
   * searches calls it when a generation arrives, so no caller's first search pays the load.
   */
  loadSearch(): void;
  countsByKind(): Partial<Record<ObjectKind, number>>;
}

/** `search`: the serialized search index of these objects (`buildSearchIndex`), when one was built already. */
export function createLayerView(index: LayerIndex, search?: unknown): LayerView {
  const byUri = new Map(index.objects.map((o) => [o.uri, o]));
  const counts: Partial<Record<ObjectKind, number>> = {};
  for (const o of index.objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  let searcher: SearchIndex | undefined;
  const loaded = (): SearchIndex =>
    (searcher ??= search === undefined ? SearchIndex.build(index.objects) : SearchIndex.load(search, index.objects));
  return {
    index,
    get: (uri) => byUri.get(uri),
    list: ({ kind, tag }) =>
      index.objects.filter((o) => (kind === undefined || o.kind === kind) && (tag === undefined || o.tags.includes(tag))),
    search: (query, options) => loaded().search(query, options),
    searchIndex: () => search ?? (search = loaded().toJSON()),
    loadSearch: () => void loaded(),
    countsByKind: () => ({ ...counts }),
  };
}
