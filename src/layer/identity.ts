/**
 * Where a layer is and what it is called — the facts a bridge needs before (and instead of)
 * loading anything. This module stays free of heavy imports: a bridging `mcp` must start fast.
 */
/** Where the manifest sits below the root. */
export const MANIFEST_PATH = '.ai/manifest.yaml';

/** The default checkout-local half of the layer (operational state, never served). */
export const DEFAULT_LOCAL_PATH = '.ai/local';
