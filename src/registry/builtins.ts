/**
 * The builtin capabilities. The projections (MCP, HTTP, CLI, docs) learn about them through the
 * registry alone; the harness's are declared beside the session table they drive
 * (src/harness/capabilities.ts), the git guard's beside its hooks (src/guard/capabilities.ts),
 * and joined here.
 */
import { z } from 'zod';
import { CapabilityError } from '../errors.js';
import { DiagnosticSchema, LayerObjectSchema, ObjectKindSchema } from '../layer/schemas.js';
import { LIMITS, OverlapSchema, PeerSchema } from '../peers/schema.js';
import { GUARD_CAPABILITIES } from '../guard/capabilities.js';
import { HARNESS_CAPABILITIES } from '../harness/capabilities.js';
import { TASK_CAPABILITIES } from '../tasks/capabilities.js';
import { COORDINATION_CAPABILITIES } from '../coordination/capabilities.js';
import { VERSION } from '../version.js';
import { CAPABILITY_KINDS, CAPABILITY_READS, defineCapability, type CapabilityDescriptor } from './descriptor.js';

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


const noInput = z.object({}).strict();
const blank = (value: string): boolean => value.trim().length === 0;

export const repositoryInfo = defineCapability({
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

export const objectsList = defineCapability({
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

export const objectsGet = defineCapability({
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

export const objectsSearch = defineCapability({
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

export const capabilitiesList = defineCapability({
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

export const capabilitiesDescribe = defineCapability({
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

export const peersList = defineCapability({
  id: 'peers.list',
  kind: 'query',
  title: 'List peers',
  description: 'Every MCP session attached to this checkout\'s server, what client it is and what it announced.',
  input: noInput,
  output: z.object({ you: z.string().nullable(), peers: z.array(PeerSchema) }),
  exposure: { mcp: { tool: 'majordomus_peers' }, http: { method: 'GET', path: '/api/v1/peers' } },
  stability: 'stable',
  reads: 'peers',
  guidance: 'See every agent attached to this checkout, and what each announced, with {tool}.',
  handler: (_input, { peers, caller }) => ({ you: caller, peers: peers.list() }),
});

export const peersAnnounce = defineCapability({
  id: 'peers.announce',
  kind: 'command',
  title: 'Announce intent',
  description:
    'Tell the other peers what you are about to do and which paths you will touch; answers with the peers whose announced paths overlap yours.',
  input: z
    .object({
      intent: z.string().max(LIMITS.intent).refine((i) => !blank(i), 'a blank intent is refused'),
      paths: z.array(z.string().min(1).max(LIMITS.path)).max(LIMITS.paths).default([]),
    })
    .strict(),
  output: z.object({ peer: PeerSchema, overlaps: z.array(OverlapSchema) }),
  exposure: { mcp: { tool: 'majordomus_announce' }, http: { method: 'POST', path: '/api/v1/peers/announce' } },
  stability: 'stable',
  reads: 'peers',
  guidance: 'Say what you are working on with {tool} {intent}: every peer sees it in the peer list and in its instructions.',
  handler: ({ intent, paths }, { peers, caller }) => {
    if (caller === null) {
      throw new CapabilityError('refused', 'announcing needs an MCP session: only a peer can announce');
    }
    return peers.announce(caller, intent, paths);
  },
});

export const healthLive = defineCapability({
  id: 'health.live',
  kind: 'query',
  title: 'Liveness',
  description: 'Answers while the process serves.',
  input: noInput,
  output: z.object({ status: z.literal('live') }),
  exposure: { http: { method: 'GET', path: '/api/v1/health/live' } },
  stability: 'stable',
  reads: 'registry',
  handler: () => ({ status: 'live' as const }),
});

export const healthReady = defineCapability({
  id: 'health.ready',
  kind: 'query',
  title: 'Readiness',
  description: 'Whether the layer is served in full (ok) or with excluded files (degraded).',
  input: noInput,
  output: z.object({ status: z.literal('ready'), layer: z.enum(['ok', 'degraded']), objects: z.number().int() }),
  exposure: { http: { method: 'GET', path: '/api/v1/health/ready' } },
  stability: 'stable',
  reads: 'layer',
  handler: (_input, { layer }) => ({
    status: 'ready' as const,
    layer: layer.index.state,
    objects: layer.index.objects.length,
  }),
});

export const BUILTIN_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([
  repositoryInfo,
  objectsList,
  objectsGet,
  objectsSearch,
  capabilitiesList,
  capabilitiesDescribe,
  peersList,
  peersAnnounce,
  healthLive,
  healthReady,
  ...HARNESS_CAPABILITIES,
  ...TASK_CAPABILITIES,
  ...GUARD_CAPABILITIES,
  ...COORDINATION_CAPABILITIES,
]);
