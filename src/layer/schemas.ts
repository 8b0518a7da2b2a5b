/**
 * The layer's objects and diagnostics as zod schemas: the source of their types (src/layer/types.ts
 * derives them) and of the JSON Schemas the capabilities that answer them publish.
 */
import { z } from 'zod';
import { DIAGNOSTIC_CODES, OBJECT_KINDS } from './types.js';

export const ObjectKindSchema = z.enum(OBJECT_KINDS).describe('An object kind of the layer.');

export const DiagnosticSchema = z.object({
  severity: z.enum(['error', 'warning']),
  code: z.enum(DIAGNOSTIC_CODES),
  /** Path relative to the root, with `/` separators. */
  path: z.string(),
  message: z.string(),
});

export const LayerObjectSchema = z.object({
  /** `majordomus://<kind>/<identity>` */
  uri: z.string(),
  /** `<kind>.<identity>` */
  id: z.string(),
  kind: ObjectKindSchema,
  identity: z.string(),
  title: z.string(),
  description: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  provenance: z.object({ path: z.string(), size: z.number().int() }),
  media_type: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
});
