/**
 * What changed between two generations of the layer: the URIs of the objects that appeared,
 * vanished or whose file changed — MCP clients are told from it (`list_changed` when it is not
 * empty, `resources/updated` for each subscribed URI in it) — and the diagnostics that are new,
 * which the server logs as warnings (and so its MCP clients hear of a broken edit).
 */
import type { Diagnostic, LayerIndex, LayerObject } from './types.js';

/**
 * Two objects of one URI are the same when their file is: everything else (title, metadata,
 * tags) is derived from the path and the content by a deterministic build.
 */
function sameObject(a: LayerObject, b: LayerObject): boolean {
  return a.content === b.content && a.provenance.path === b.provenance.path && a.provenance.size === b.provenance.size;
}

/** The URIs that differ between `before` and `after`, sorted. */
export function changedUris(before: LayerIndex, after: LayerIndex): string[] {
  const old = new Map(before.objects.map((o) => [o.uri, o]));
  const changed: string[] = [];
  for (const object of after.objects) {
    const was = old.get(object.uri);
    if (was === undefined || !sameObject(was, object)) changed.push(object.uri);
    old.delete(object.uri);
  }
  changed.push(...old.keys());
  return changed.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Whether a new build says anything the serving one does not (objects, diagnostics or state). */
export function sameLayer(before: LayerIndex, after: LayerIndex, changed: readonly string[]): boolean {
  return (
    changed.length === 0 &&
    before.state === after.state &&
    before.objects.length === after.objects.length &&
    JSON.stringify(before.diagnostics) === JSON.stringify(after.diagnostics) &&
    before.sections.join() === after.sections.join()
  );
}

/** The diagnostics of `after` that `before` did not have, in `after`'s order. */
export function newDiagnostics(before: LayerIndex, after: LayerIndex): Diagnostic[] {
  const key = (d: Diagnostic): string => JSON.stringify([d.severity, d.code, d.path, d.message]);
  const known = new Set(before.diagnostics.map(key));
  return after.diagnostics.filter((d) => !known.has(key(d)));
}
