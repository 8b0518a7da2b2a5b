/**
 * The shapes of the layer that every other part reads: objects, diagnostics and the index.
 * They cross thread boundaries inside the snapshot, so they are plain JSON data. Objects and
 * diagnostics are defined by their zod schemas (src/layer/schemas.ts), imported here for their
 * types only, so this module loads no zod.
 */
import type { z } from 'zod';
import type { DiagnosticSchema, LayerObjectSchema } from './schemas.js';

export const OBJECT_KINDS = ['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

export type DiscoveryMode = 'vcs' | 'filesystem';

export const DIAGNOSTIC_CODES = [
  'malformed_front_matter',
  'missing_front_matter',
  'malformed_yaml',
  'unknown_key',
  'schema_violation',
  'duplicate_identity',
  'invalid_utf8',
  'oversized',
  'symlink',
  'unreadable',
  'reload_failed',
] as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

/** A problem with a file of the layer; the file is left out. */
export type Diagnostic = z.infer<typeof DiagnosticSchema>;

/** One served object: a rule, a skill, a document… */
export type LayerObject = z.infer<typeof LayerObjectSchema>;

export interface LayerIndex {
  /** Stable id of this checkout's layer: a hash of the root's real path (the path is never exposed). */
  repository_id: string;
  /** Absolute real path of the root; never leaves the process. */
  root: string;
  /** The manifest's `local.path` (relative to the root, `/` separators): what the server writes and never serves. */
  localPath: string;
  discovery: DiscoveryMode;
  state: 'ok' | 'degraded';
  /** Sorted by `uri`. */
  objects: LayerObject[];
  /** Sorted by path, then code. */
  diagnostics: Diagnostic[];
  sections: ObjectKind[];
}
