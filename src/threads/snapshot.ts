/**
 * The frozen snapshot handed to other threads: one generation of the layer index and the
 * capability catalog, encoded once into a `SharedArrayBuffer`. Threads receive the same memory (no
 * copy per thread or per call) and decode it once per generation: a snapshot never changes, but a
 * reload (src/runtime/freshness.ts) hands every thread a new one with the next generation.
 *
 * Layout (little endian): bytes 0–3 magic "MJS1", 4–7 payload length, 8… UTF-8 JSON payload.
 */
import type { CapabilityEntry } from '../registry/catalog.js';
import { buildSearchIndex } from '../layer/search.js';
import type { LayerIndex } from '../layer/types.js';
import { createLayerView, type LayerView } from '../layer/view.js';
import { VERSION } from '../platform/version.js';
import type { Runtime } from '../runtime/runtime.js';

const MAGIC = 0x3153_4a4d; // "MJS1" read as a little-endian u32
const HEADER_BYTES = 8;

export interface SnapshotContent {
  version: string;
  /** 1 for the startup build, +1 per swap (docs/LAYER.md, "Freshness"). */
  generation: number;
  index: LayerIndex;
  capabilities: readonly CapabilityEntry[];
  /** The layer's full-text index, serialized once by whoever builds the snapshot (`buildSearchIndex`). */
  search?: unknown;
}

/** What one generation's snapshot is built from. */
export interface LayerSnapshotInput {
  version: string;
  generation: number;
  index: LayerIndex;
  capabilities: readonly CapabilityEntry[];
  /** The layer's search index when the caller built it already (the startup view); built here otherwise. */
  search?: unknown;
}

/**
 * The one place a generation's snapshot is built (at start in the main thread, on a reload in the
 * build worker), so whatever a generation carries besides the index is added here once.
 */
export function layerSnapshot(input: LayerSnapshotInput): SharedArrayBuffer {
  return encodeSnapshot({
    version: input.version,
    generation: input.generation,
    index: input.index,
    capabilities: input.capabilities,
    search: input.search ?? buildSearchIndex(input.index.objects),
  });
}

/** A thread's view of a decoded snapshot: its index, searched through the snapshot's search index (loaded at the first search). */
export function snapshotView(content: SnapshotContent): LayerView {
  return createLayerView(content.index, content.search);
}

export function encodeSnapshot(content: SnapshotContent): SharedArrayBuffer {
  const payload = new TextEncoder().encode(JSON.stringify(content));
  const buffer = new SharedArrayBuffer(HEADER_BYTES + payload.byteLength);
  const header = new DataView(buffer);
  header.setUint32(0, MAGIC, true);
  header.setUint32(4, payload.byteLength, true);
  new Uint8Array(buffer, HEADER_BYTES).set(payload);
  return buffer;
}

export function decodeSnapshot(buffer: SharedArrayBuffer): SnapshotContent {
  const header = new DataView(buffer);
  if (buffer.byteLength < HEADER_BYTES || header.getUint32(0, true) !== MAGIC) {
    throw new Error('not a majordomus snapshot');
  }
  const length = header.getUint32(4, true);
  const text = new TextDecoder().decode(new Uint8Array(buffer, HEADER_BYTES, length));
  return JSON.parse(text) as SnapshotContent;
}

/** The serving generation of `runtime` as every other thread of the server decodes it. */
export function runtimeSnapshot(runtime: Runtime): SharedArrayBuffer {
  return layerSnapshot({
    version: VERSION,
    generation: runtime.generation,
    index: runtime.layer.index,
    capabilities: runtime.registry.catalog.entries,
    search: runtime.layer.searchIndex(),
  });
}
