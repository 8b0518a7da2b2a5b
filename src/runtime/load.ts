/** Loads what a serving process needs: the layer (per the global options) and the registry. */
import type { LayerSelection } from '../layer/load.js';
import { loadLayer } from '../layer/load.js';
import { createLayerView, type LayerView } from '../layer/view.js';
import { BUILTIN_CAPABILITIES } from '../capabilities/index.js';
import { buildRegistry, type Registry } from '../registry/registry.js';

export interface Loaded {
  layer: LayerView;
  registry: Registry;
}

export function builtinRegistry(): Registry {
  return buildRegistry(BUILTIN_CAPABILITIES);
}

export async function loadServing(global: LayerSelection, cwd: string = process.cwd()): Promise<Loaded> {
  const index = await loadLayer({ cwd, repo: global.repo, discovery: global.discovery, strict: global.strict });
  return { layer: createLayerView(index), registry: builtinRegistry() };
}
