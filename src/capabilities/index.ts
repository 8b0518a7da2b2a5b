/**
 * The assembly: every capability the product serves, in one list. Each domain declares its own
 * beside the others in this folder; the projections (MCP, HTTP, CLI, docs) learn about them
 * through the registry alone.
 */
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { BOARD_CAPABILITIES } from './board.js';
import { CATALOG_CAPABILITIES } from './catalog.js';
import { COORDINATION_CAPABILITIES } from './coordination.js';
import { GUARD_CAPABILITIES } from './guard.js';
import { HARNESS_CAPABILITIES } from './harness.js';
import { HEALTH_CAPABILITIES } from './health.js';
import { LAYER_CAPABILITIES } from './layer.js';
import { PEER_CAPABILITIES } from './peers.js';
import { TASK_CAPABILITIES } from './tasks.js';

export const BUILTIN_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([
  ...LAYER_CAPABILITIES,
  ...CATALOG_CAPABILITIES,
  ...PEER_CAPABILITIES,
  ...HEALTH_CAPABILITIES,
  ...HARNESS_CAPABILITIES,
  ...TASK_CAPABILITIES,
  ...GUARD_CAPABILITIES,
  ...COORDINATION_CAPABILITIES,
  ...BOARD_CAPABILITIES,
]);
