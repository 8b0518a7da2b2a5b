/**
 * What a handler is given, by what it reads: the one place that ties the registry core's
 * `reads` to the domains' state. Capability modules declare through `capability`, which checks a
 * handler against the context its `reads` brings.
 */
import type { z } from 'zod';
import type { BoardAccess } from '../board/schemas.js';
import type { CoordinationAccess } from '../coordination/coordination.js';
import type { HarnessAccess } from '../harness/table.js';
import type { LayerView } from '../layer/view.js';
import type { PeerAccess } from '../peers/board.js';
import type { CapabilityCatalog } from '../registry/catalog.js';
import { defineCapability, type CapabilityDescriptor, type CapabilityReads } from '../registry/descriptor.js';
import type { TaskAccess } from '../tasks/board.js';

export interface ContextByReads {
  registry: { catalog: CapabilityCatalog };
  /** `generation`: which build of the layer `layer` is (1 at start, +1 per reload). */
  layer: { catalog: CapabilityCatalog; layer: LayerView; generation: number };
  /** `board`: the board shared with the repository's other checkouts; null while this checkout is alone. */
  peers: { peers: PeerAccess; coordination: CoordinationAccess; board: BoardAccess | null; caller: string | null };
  harness: { harness: HarnessAccess; tasks: TaskAccess; caller: string | null };
}

export type CapabilityContext = ContextByReads[CapabilityReads];

/** Declares a capability whose handler gets the context its `reads` brings. */
export function capability<I extends z.ZodType, O extends z.ZodType, R extends CapabilityReads>(
  descriptor: CapabilityDescriptor<I, O, ContextByReads[R]> & { reads: R },
): CapabilityDescriptor {
  return defineCapability(descriptor);
}
