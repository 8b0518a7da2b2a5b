/**
 * The shapes of the layer that every other part reads: objects, diagnostics and the index.
 * They cross thread boundaries inside the snapshot, so they are plain JSON data.
 */

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
] as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export interface Diagnostic {
  severity: 'error' | 'warning';
  code: DiagnosticCode;
  /** Path relative to the root, with `/` separators. */
  path: string;
  message: string;
}

export interface LayerObject {
  /** `majordomus://<kind>/<identity>` */
  uri: string;
  /** `<kind>.<identity>` */
  id: string;
  kind: ObjectKind;
  identity: string;
  title: string;
  description: string;
  metadata: Record<string, unknown>;
  provenance: { path: string; size: number };
  media_type: string;
  content: string;
  tags: string[];
}

export interface LayerIndex {
  /** Stable id of this checkout's layer: a hash of the root's real path (the path is never exposed). */
  repository_id: string;
  /** Absolute real path of the root; never leaves the process. */
  root: string;
  discovery: DiscoveryMode;
  state: 'ok' | 'degraded';
  /** Sorted by `uri`. */
  objects: LayerObject[];
  /** Sorted by path, then code. */
  diagnostics: Diagnostic[];
  sections: ObjectKind[];
}
