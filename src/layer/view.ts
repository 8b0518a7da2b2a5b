/**
 * A read-only view of a built index with the lookups handlers need. Built once per thread from
 * the index (or from the snapshot), never per call.
 */
import { searchObjects, type SearchHit } from './search.js';
import type { LayerIndex, LayerObject, ObjectKind } from './types.js';

export interface LayerView {
  readonly index: LayerIndex;
  get(uri: string): LayerObject | undefined;
  list(filter: { kind?: ObjectKind; tag?: string }): LayerObject[];
  search(query: string, options: { kind?: ObjectKind; limit: number }): SearchHit[];
  countsByKind(): Partial<Record<ObjectKind, number>>;
}

export function createLayerView(index: LayerIndex): LayerView {
  const byUri = new Map(index.objects.map((o) => [o.uri, o]));
  const counts: Partial<Record<ObjectKind, number>> = {};
  for (const o of index.objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  return {
    index,
    get: (uri) => byUri.get(uri),
    list: ({ kind, tag }) =>
      index.objects.filter((o) => (kind === undefined || o.kind === kind) && (tag === undefined || o.tags.includes(tag))),
    search: (query, options) => searchObjects(index.objects, query, options),
    countsByKind: () => ({ ...counts }),
  };
}
