/**
 * Where a layer is and what it is called — the facts a bridge needs before (and instead of)
 * loading anything. This module stays free of heavy imports: a bridging `mcp` must start fast.
 */
import { createHash } from 'node:crypto';

/** Where the manifest sits below the root. */
export const MANIFEST_PATH = '.ai/manifest.yaml';

/** The default checkout-local half of the layer (operational state, never served). */
export const DEFAULT_LOCAL_PATH = '.ai/local';

/** The stable id of a checkout's layer: the first 16 hex digits of sha256 of the root's real path. */
export function repositoryId(realRoot: string): string {
  return createHash('sha256').update(realRoot).digest('hex').slice(0, 16);
}
