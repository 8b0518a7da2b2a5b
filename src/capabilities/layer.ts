/**
 * The layer's capabilities: what the repository serves (its id, generation, diagnostics) and its
 * objects, listed, fetched and searched. Pure functions of the snapshot.
 */
import { z } from 'zod';
import { CapabilityError } from '../platform/errors.js';
import { DiagnosticSchema, LayerObjectSchema, ObjectKindSchema } from '../layer/schemas.js';
import { VERSION } from '../platform/version.js';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';

const noInput = z.object({}).strict();
const blank = (value: string): boolean => value.trim().length === 0;

const objectKind = ObjectKindSchema;

const objectSummary = z.object({
  uri: z.string(),
  id: z.string(),
  kind: objectKind,
  identity: z.string(),
  title: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  path: z.string(),
});

const layerObject = LayerObjectSchema;

const diagnostic = DiagnosticSchema;

export const repositoryInfo = capability({
  id: 'repository.info',
  kind: 'query',
  title: 'Repository information',
  description: 'The layer this server serves: its id, generation (1 at start, +1 each time an edit is reloaded), discovery mode, state, counts by kind and every diagnostic.',
  input: noInput,
  output: z.object({
    name: z.literal('majordomus'),
    version: z.string(),
    repository_id: z.string(),
    generation: z.number().int().positive(),
    discovery: z.enum(['vcs', 'filesystem']),
    state: z.enum(['ok', 'degraded']),
    sections: z.array(objectKind),
    counts: z.record(z.string(), z.number().int()),
    diagnostics: z.array(diagnostic),
  }),
  exposure: { mcp: { tool: 'majordomus_info' }, http: { method: 'GET', path: '/api/v1/repository' } },
  stability: 'stable',
  reads: 'layer',
  guidance: 'See what is served, and every diagnostic, with {tool}.',
  handler: (_input, { layer, generation }) => ({
    name: 'majordomus' as const,
    version: VERSION,
    repository_id: layer.index.repository_id,
    generation,
    discovery: layer.index.discovery,
    state: layer.index.state,
    sections: layer.index.sections,
    counts: layer.countsByKind(),
    diagnostics: layer.index.diagnostics,
  }),
});

export const objectsList = capability({
  id: 'objects.list',
  kind: 'query',
  title: 'List objects',
  description: 'Every object of the layer, optionally of one kind or carrying one tag, without content.',
  input: z.object({ kind: objectKind.optional(), tag: z.string().min(1).max(200).optional() }).strict(),
  output: z.object({ objects: z.array(objectSummary) }),
  exposure: { mcp: { tool: 'majordomus_list' }, http: { method: 'GET', path: '/api/v1/objects' } },
  stability: 'stable',
  reads: 'layer',
  guidance: 'List the rules, skills, prompts, ADRs and documents with {tool} (by kind or tag).',
  handler: (input, { layer }) => ({
    objects: layer.list(input).map((o) => ({
      uri: o.uri,
      id: o.id,
      kind: o.kind,
      identity: o.identity,
      title: o.title,
      description: o.description,
      tags: o.tags,
      path: o.provenance.path,
    })),
  }),
});

export const objectsGet = capability({
  id: 'objects.get',
  kind: 'query',
  title: 'Get an object',
  description: 'One object of the layer by its URI (majordomus://<kind>/<identity>), with its content.',
  input: z.object({ uri: z.string().max(2048).regex(/^majordomus:\/\//, 'must start with majordomus://') }).strict(),
  output: layerObject,
  exposure: { mcp: { tool: 'majordomus_get' }, http: { method: 'GET', path: '/api/v1/object' } },
  stability: 'stable',
  reads: 'layer',
  guidance: 'Read one object with {tool} {uri}.',
  handler: ({ uri }, { layer }) => {
    const found = layer.get(uri);
    if (!found) throw new CapabilityError('not_found', `no object ${uri}`);
    return found;
  },
});

export const objectsSearch = capability({
  id: 'objects.search',
  kind: 'query',
  title: 'Search objects',
  description: 'Objects whose title, identity, tags, description or content match any term of the query (also as a prefix or with a small typo; accents and case ignored), best first.',
  input: z
    .object({
      query: z.string().max(1000).refine((q) => !blank(q), 'a blank query is refused'),
      kind: objectKind.optional(),
      limit: z.number().int().min(1).max(200).default(20),
    })
    .strict(),
  output: z.object({
    hits: z.array(
      z.object({
        uri: z.string(),
        id: z.string(),
        kind: objectKind,
        title: z.string(),
        description: z.string(),
        score: z.number(),
      }),
    ),
  }),
  exposure: { mcp: { tool: 'majordomus_search' }, http: { method: 'GET', path: '/api/v1/search' } },
  stability: 'stable',
  reads: 'layer',
  guidance: 'Search the layer with {tool} {query}.',
  handler: ({ query, kind, limit }, { layer }) => ({ hits: layer.search(query, { kind, limit }) }),
});

export const LAYER_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([repositoryInfo, objectsList, objectsGet, objectsSearch]);
