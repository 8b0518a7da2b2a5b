/**
 * A broken edit never takes the layer down. A reload that fails as a whole (the manifest broken,
 * the root gone, git unusable) keeps every object of the serving generation and says why in a
 * `reload_failed` diagnostic; a file the serving generation served that now fails (malformed YAML,
 * a schema violation, invalid UTF-8…) keeps its last good object, its diagnostic saying so. A fix
 * recovers: the next build serves the file again and its diagnostic is gone.
 */
import { MANIFEST_PATH } from './identity.js';
import type { Diagnostic, LayerIndex, LayerObject } from './types.js';

/** Appended to the diagnostics of a file whose last good object is still served. */
export const LAST_GOOD_NOTE = 'the last good version of this file is still served until it is fixed';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byPathThenCode(a: Diagnostic, b: Diagnostic): number {
  return compare(a.path, b.path) || compare(a.code, b.code);
}

function stateOf(diagnostics: readonly Diagnostic[]): LayerIndex['state'] {
  return diagnostics.some((d) => d.severity === 'error') ? 'degraded' : 'ok';
}

/**
 * Merges a fresh build over the serving one: an object of the serving generation whose file now
 * has an error diagnostic, and whose URI the fresh build does not serve otherwise, is kept.
 */
export function keepLastGood(serving: LayerIndex, fresh: LayerIndex): LayerIndex {
  const failing = new Set(fresh.diagnostics.filter((d) => d.severity === 'error').map((d) => d.path));
  if (failing.size === 0) return fresh;
  const served = new Set(fresh.objects.map((o) => o.uri));
  const sections = new Set(fresh.sections);
  const kept: LayerObject[] = [];
  for (const object of serving.objects) {
    if (!failing.has(object.provenance.path) || served.has(object.uri) || !sections.has(object.kind)) continue;
    kept.push(object);
    served.add(object.uri);
  }
  if (kept.length === 0) return fresh;
  const keptPaths = new Set(kept.map((o) => o.provenance.path));
  const diagnostics = fresh.diagnostics.map((d) =>
    keptPaths.has(d.path) && d.severity === 'error' ? { ...d, message: `${d.message}; ${LAST_GOOD_NOTE}` } : d,
  );
  const objects = [...fresh.objects, ...kept].sort((a, b) => compare(a.uri, b.uri));
  return { ...fresh, objects, diagnostics, state: stateOf(diagnostics) };
}

/**
 * The generation after a reload that failed as a whole: the serving objects and diagnostics, with
 * one `reload_failed` diagnostic (replacing an earlier one) naming why.
 */
export function keepAfterFailure(serving: LayerIndex, why: string): LayerIndex {
  const diagnostics: Diagnostic[] = serving.diagnostics.filter((d) => d.code !== 'reload_failed');
  diagnostics.push({
    severity: 'error',
    code: 'reload_failed',
    path: MANIFEST_PATH,
    message: `the layer could not be rebuilt (${why}); the objects of the last good build are still served`,
  });
  diagnostics.sort(byPathThenCode);
  return { ...serving, diagnostics, state: 'degraded' };
}
