/**
 * The successive generations of a serving layer, as the layer build worker makes them: each
 * rebuild merges over the serving generation (src/layer/rebuild.ts keeps its last good objects
 * where a file now fails), parses again only the files whose bytes changed (what each file made is
 * kept from one build to the next), and updates the search index with the objects that changed
 * rather than building it again. A build becomes the serving generation only once it was published.
 */
import { sameLayer } from './changes.js';
import { ParsedFiles } from './parsed-files.js';
import { rebuildLayer } from './rebuild.js';
import { LiveSearchIndex } from './search.js';
import type { DiscoveryMode, LayerIndex } from './types.js';

/** A build that changed something: what the next generation is made of. */
export interface NextGeneration {
  generation: number;
  index: LayerIndex;
  /** Its search index, serialized. */
  search: unknown;
  /** URIs that appeared, vanished or changed. */
  changed: string[];
  /** Why the build failed as a whole (the last good objects stay), or null. */
  failed: string | null;
}

export interface LayerGenerationsOptions {
  /** The serving generation: its index, its number and its serialized search index. */
  index: LayerIndex;
  generation: number;
  search: unknown;
  discovery: DiscoveryMode;
}

export class LayerGenerations {
  #serving: LayerIndex;
  #generation: number;
  readonly #search: LiveSearchIndex;
  readonly #parsed = new ParsedFiles();
  readonly #discovery: DiscoveryMode;

  constructor(options: LayerGenerationsOptions) {
    this.#serving = options.index;
    this.#generation = options.generation;
    this.#search = LiveSearchIndex.load(options.search, options.index.objects);
    this.#discovery = options.discovery;
  }

  /** The serving generation's index. */
  get serving(): LayerIndex {
    return this.#serving;
  }

  /**
   * Rebuilds; when something changed, hands the next generation to `publish` and serves it once
   * that returned. False when nothing changed. A build or a publish that throws leaves the
   * serving generation and the search index as they were; the error is the caller's to report.
   */
  async next(publish: (next: NextGeneration) => void): Promise<boolean> {
    try {
      const rebuilt = await rebuildLayer(this.#serving, this.#discovery, this.#parsed);
      if (sameLayer(this.#serving, rebuilt.index, rebuilt.changed)) return false;
      this.#search.update(rebuilt.index.objects);
      publish({ generation: this.#generation + 1, index: rebuilt.index, search: this.#search.toJSON(), changed: rebuilt.changed, failed: rebuilt.failed });
      this.#serving = rebuilt.index;
      this.#generation += 1;
      return true;
    } catch (error) {
      this.#search.update(this.#serving.objects);
      throw error;
    }
  }
}
