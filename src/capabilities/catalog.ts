/**
 * The registry describing itself: every capability with its schemas, as the projections see it.
 */
import { z } from 'zod';
import { CapabilityError } from '../platform/errors.js';
import { CAPABILITY_KINDS, CAPABILITY_READS, type CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';


const jsonSchema = z.record(z.string(), z.unknown());

const capabilityEntry = z.object({
  id: z.string(),
  kind: z.enum(CAPABILITY_KINDS),
  title: z.string(),
  description: z.string(),
  stability: z.enum(['stable', 'experimental', 'deprecated']),
  reads: z.enum(CAPABILITY_READS),
  exposure: z.object({
    mcp: z.object({ tool: z.string().optional(), resource: z.string().optional() }).optional(),
    http: z.object({ method: z.enum(['GET', 'POST']), path: z.string() }).optional(),
    cli: z.object({ path: z.string() }).optional(),
  }),
  annotations: z.object({
    readOnlyHint: z.boolean(),
    idempotentHint: z.boolean(),
    destructiveHint: z.boolean(),
    openWorldHint: z.boolean(),
  }),
  access: z.enum(['open', 'token']),
  guidance: z.string().optional(),
  volatile: z.literal(true).optional(),
  refusals: z.array(z.string()).readonly().optional(),
  input_schema: jsonSchema,
  output_schema: jsonSchema,
});


export const capabilitiesList = capability({
  id: 'capabilities.list',
  kind: 'query',
  title: 'List capabilities',
  description: 'Every capability of the registry with its exposures, optionally of one kind.',
  input: z.object({ kind: z.enum(CAPABILITY_KINDS).optional() }).strict(),
  output: z.object({
    capabilities: z.array(
      z.object({ id: z.string(), kind: z.enum(CAPABILITY_KINDS), title: z.string(), stability: z.string(), exposure: capabilityEntry.shape.exposure }),
    ),
  }),
  exposure: {
    mcp: { tool: 'majordomus_capabilities' },
    http: { method: 'GET', path: '/api/v1/capabilities' },
    cli: { path: 'capabilities list' },
  },
  stability: 'stable',
  reads: 'registry',
  handler: ({ kind }, { catalog }) => ({
    capabilities: catalog.entries
      .filter((e) => kind === undefined || e.kind === kind)
      .map(({ id, kind: k, title, stability, exposure }) => ({ id, kind: k, title, stability, exposure })),
  }),
});

export const capabilitiesDescribe = capability({
  id: 'capabilities.describe',
  kind: 'query',
  title: 'Describe a capability',
  description: 'One capability with its annotations and its input and output JSON Schemas.',
  input: z.object({ id: z.string().min(1).max(200) }).strict(),
  output: capabilityEntry,
  exposure: {
    mcp: { tool: 'majordomus_capability' },
    http: { method: 'GET', path: '/api/v1/capability' },
    cli: { path: 'capabilities describe' },
  },
  stability: 'stable',
  reads: 'registry',
  handler: ({ id }, { catalog }) => {
    const entry = catalog.byId(id);
    if (!entry) throw new CapabilityError('not_found', `no capability ${id}`);
    return entry;
  },
});

export const CATALOG_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([capabilitiesList, capabilitiesDescribe]);
