/**
 * The plain-data description of every capability: what `capabilities.list` and
 * `capabilities.describe` answer, what the snapshot carries to other threads, and what OpenAPI
 * and the generated docs are written from. JSON Schemas come from the zod schemas, never by hand.
 */
import { z } from 'zod';
import type { WireErrorCode } from '../platform/errors.js';
import { accessFor, annotationsFor, type Access, type CapabilityDescriptor, type ToolAnnotations } from './descriptor.js';

export type JsonSchema = Record<string, unknown>;

export interface CapabilityEntry {
  id: string;
  kind: CapabilityDescriptor['kind'];
  title: string;
  description: string;
  stability: CapabilityDescriptor['stability'];
  reads: CapabilityDescriptor['reads'];
  exposure: CapabilityDescriptor['exposure'];
  annotations: ToolAnnotations;
  /** Over HTTP: open on loopback, or only with the lease's bearer token. */
  access: Access;
  /** The capability's line of the `initialize` instructions (`{tool}`: its tool name). */
  guidance?: string;
  /** Its answer depends on more than the snapshot: never cached (see `CapabilityDescriptor.volatile`). */
  volatile?: true;
  /** Wire errors it may answer beyond those every capability of its kind may (OpenAPI lists them). */
  refusals?: readonly WireErrorCode[];
  /** It starts, drives or reads other agents (see `CapabilityDescriptor.delegation`). */
  delegation?: true;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
}

export interface CapabilityCatalog {
  /** Sorted by id. */
  entries: readonly CapabilityEntry[];
  byId(id: string): CapabilityEntry | undefined;
}

export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonSchema;
  return rest;
}

export function catalogEntry(d: CapabilityDescriptor): CapabilityEntry {
  return {
    id: d.id,
    kind: d.kind,
    title: d.title,
    description: d.description,
    stability: d.stability,
    reads: d.reads,
    exposure: d.exposure,
    annotations: annotationsFor(d.kind, d.effects),
    access: accessFor(d.kind, d.reads),
    ...(d.guidance === undefined ? {} : { guidance: d.guidance }),
    ...(d.volatile === true ? { volatile: true as const } : {}),
    ...(d.refusals === undefined ? {} : { refusals: d.refusals }),
    ...(d.delegation === true ? { delegation: true as const } : {}),
    input_schema: jsonSchemaOf(d.input, 'input'),
    output_schema: jsonSchemaOf(d.output, 'output'),
  };
}

export function catalogFrom(entries: readonly CapabilityEntry[]): CapabilityCatalog {
  const sorted = [...entries].sort((a, b) => a.id.localeCompare(b.id));
  const byId = new Map(sorted.map((e) => [e.id, e]));
  return { entries: sorted, byId: (id) => byId.get(id) };
}
