/**
 * The kind table: for each kind of layer object, where its files live, how a path becomes an
 * identity, how its title is chosen, the media type, and the zod schema of its metadata.
 * The schemas are strict (an unknown key is a diagnostic) and are the single source the registry
 * turns into JSON Schema for OpenAPI and MCP. Adding a kind starts here (docs/LAYER.md).
 */
import { z } from 'zod';
import { firstHeading, firstParagraph } from './markdown.js';
import type { DiagnosticCode, ObjectKind } from './types.js';

const text = z.string().min(1);
const tags = z.array(text).describe('Free labels; the index sorts them and drops duplicates.');

const markdownFields = {
  title: text.optional().describe('Title; defaults to the first H1 of the body.'),
  description: z.string().optional().describe('One-line summary; defaults to the first paragraph of the body.'),
  tags: tags.optional(),
};

export const RuleMetadataSchema = z.strictObject({
  ...markdownFields,
  applies_to: z.array(text).optional().describe('Globs of the paths this rule governs.'),
});

/** Claude Code / Agent Skills front matter: `name` and `description` are required. */
export const SkillMetadataSchema = z.strictObject({
  name: text.describe('The skill name; the title of the object.'),
  description: text.describe('What the skill does and when to use it.'),
  license: z.string().optional(),
  compatibility: z.string().optional(),
  'allowed-tools': z.union([z.string(), z.array(text)]).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  version: z.union([z.string(), z.number()]).optional(),
  'argument-hint': z.string().optional(),
  'disable-model-invocation': z.boolean().optional(),
  'user-invocable': z.boolean().optional(),
  model: z.string().optional(),
  tags: tags.optional(),
});

export const PromptMetadataSchema = z.strictObject(markdownFields);
export const WorkflowMetadataSchema = z.strictObject(markdownFields);
export const AdrMetadataSchema = z.strictObject(markdownFields);
export const DocumentMetadataSchema = z.strictObject(markdownFields);

/** The agents a profile can start (§8). */
export const PROFILE_AGENTS = ['claude', 'codex', 'opencode', 'gemini', 'executor'] as const;

/**
 * A profile id: one or more segments joined by `/` (`team/claude-worker`, hyprpilot's
 * `personal/engineer`), each starting with a letter or digit; scope globs match across `/`.
 */
export const PROFILE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export const ProfileMetadataSchema = z.strictObject({
  id: z
    .string()
    .max(200)
    .regex(PROFILE_ID, 'must be segments joined by "/", each starting with a letter or digit and using only letters, digits, ".", "_" and "-"')
    .describe('The identity of the profile (a family is written with `/`: `team/claude-worker`).'),
  agent: z.enum(PROFILE_AGENTS),
  command: text.optional().describe('Executable to run instead of the agent default.'),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  model: text.optional(),
  effort: text.optional(),
  mode: text.optional(),
  allowed_modes: z.array(text).optional().describe('Modes a spawn or turn may choose beyond narrowing the profile\'s own (which is always allowed).'),
  cwd: text.optional(),
  harness: z.strictObject({ enabled: z.boolean() }),
  description: z.string().optional(),
  tags: tags.optional(),
});

const positiveInt = z.int().positive();

export const PolicyMetadataSchema = z.strictObject({
  description: z.string().optional(),
  tags: tags.optional(),
  permissions: z
    .strictObject({
      deny: z.array(text).optional(),
      allow: z.array(text).optional(),
    })
    .optional(),
  harness: z
    .strictObject({
      max_sessions: positiveInt.optional(),
      max_live_sessions: z.int().min(0).optional().describe('Sessions with a turn running at once; absent or 0: no ceiling.'),
      max_depth: positiveInt.optional(),
      include_profiles: z.array(text).optional().describe('Globs of the profile ids the harness may start (`*` crosses `/`); absent: every nominated profile, `[]`: none.'),
      exclude_profiles: z.array(text).optional().describe('Globs of profile ids the harness never starts; exclude beats include.'),
      default_profile: text.optional().describe('The profile an orchestrator should start when it has no reason to pick another.'),
    })
    .optional(),
});

/** The metadata schema of every kind; `z.toJSONSchema(KIND_SCHEMAS[kind])` gives its JSON Schema. */
export const KIND_SCHEMAS = {
  rule: RuleMetadataSchema,
  skill: SkillMetadataSchema,
  prompt: PromptMetadataSchema,
  workflow: WorkflowMetadataSchema,
  adr: AdrMetadataSchema,
  document: DocumentMetadataSchema,
  profile: ProfileMetadataSchema,
  policy: PolicyMetadataSchema,
} as const satisfies Record<ObjectKind, z.ZodObject>;

export type KindMetadata = { [K in ObjectKind]: z.infer<(typeof KIND_SCHEMAS)[K]> };

export type MediaType = 'text/markdown' | 'application/yaml';

/** One row of the kind table. */
export interface KindSpec {
  readonly kind: ObjectKind;
  /** Where the files live, as a glob relative to the manifest's `repo.path`. */
  readonly where: string;
  readonly mediaType: MediaType;
  /** `markdown`: optional YAML front matter then a body; `yaml`: the whole file is YAML. */
  readonly format: 'markdown' | 'yaml';
  /** Markdown only: a file without front matter is refused (`missing_front_matter`). */
  readonly frontMatterRequired: boolean;
  readonly schema: z.ZodObject;
  /** The identity `relative` (below the repo path, `/` separators) gives, or undefined if not this kind. */
  match(relative: string): string | undefined;
  /** The final identity: the path's, or a metadata field for kinds named by their content. */
  identity(pathIdentity: string, metadata: Record<string, unknown>): string;
  title(identity: string, metadata: Record<string, unknown>, body: string): string;
  description(metadata: Record<string, unknown>, body: string): string;
}

function stringField(metadata: Record<string, unknown>, key: string): string | undefined {
  const value = metadata[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `<dir>/**\/*.md`: the path below `dir` without `.md`. */
function nestedMarkdown(dir: string): (relative: string) => string | undefined {
  const prefix = `${dir}/`;
  return (relative) => {
    if (!relative.startsWith(prefix) || !relative.endsWith('.md')) return undefined;
    const identity = relative.slice(prefix.length, -3);
    return identity === '' || identity.endsWith('/') ? undefined : identity;
  };
}

/** `<dir>/**\/*.yaml`: the path below `dir` without `.yaml`. */
function nestedYaml(dir: string): (relative: string) => string | undefined {
  const prefix = `${dir}/`;
  return (relative) => {
    if (!relative.startsWith(prefix) || !relative.endsWith('.yaml')) return undefined;
    const identity = relative.slice(prefix.length, -'.yaml'.length);
    return identity === '' || identity.endsWith('/') ? undefined : identity;
  };
}

/** `<dir>/*<extension>`: the file stem, directly in `dir`. */
function flatFile(dir: string, extension: string): (relative: string) => string | undefined {
  const prefix = `${dir}/`;
  return (relative) => {
    if (!relative.startsWith(prefix) || !relative.endsWith(extension)) return undefined;
    const stem = relative.slice(prefix.length, -extension.length);
    return stem === '' || stem.includes('/') ? undefined : stem;
  };
}

const markdownTitle = (identity: string, metadata: Record<string, unknown>, body: string): string =>
  stringField(metadata, 'title') ?? (firstHeading(body) || identity);
const markdownDescription = (metadata: Record<string, unknown>, body: string): string =>
  stringField(metadata, 'description') ?? firstParagraph(body);
const yamlDescription = (metadata: Record<string, unknown>): string => stringField(metadata, 'description') ?? '';
const samePath = (pathIdentity: string): string => pathIdentity;

function markdownKind(kind: ObjectKind, where: string, match: (relative: string) => string | undefined): KindSpec {
  return {
    kind,
    where,
    mediaType: 'text/markdown',
    format: 'markdown',
    frontMatterRequired: false,
    schema: KIND_SCHEMAS[kind],
    match,
    identity: samePath,
    title: markdownTitle,
    description: markdownDescription,
  };
}

/** The kind table, in the order of OBJECT_KINDS. */
export const KINDS: { readonly [K in ObjectKind]: KindSpec } = {
  rule: markdownKind('rule', 'rules/**/*.md', nestedMarkdown('rules')),
  skill: {
    kind: 'skill',
    where: 'skills/<id>/SKILL.md',
    mediaType: 'text/markdown',
    format: 'markdown',
    frontMatterRequired: true,
    schema: KIND_SCHEMAS.skill,
    match: (relative) => {
      const parts = relative.split('/');
      return parts.length === 3 && parts[0] === 'skills' && parts[2] === 'SKILL.md' && parts[1] !== '' ? parts[1] : undefined;
    },
    identity: samePath,
    title: (identity, metadata) => stringField(metadata, 'name') ?? identity,
    description: markdownDescription,
  },
  prompt: markdownKind('prompt', 'prompts/*.md', flatFile('prompts', '.md')),
  workflow: markdownKind('workflow', 'workflows/*.md', flatFile('workflows', '.md')),
  adr: markdownKind('adr', 'adrs/*.md', flatFile('adrs', '.md')),
  document: markdownKind('document', 'knowledge/**/*.md', nestedMarkdown('knowledge')),
  profile: {
    kind: 'profile',
    // Families nest: `profiles/team/claude-worker.yaml` holds `id: team/claude-worker` by convention;
    // the identity is the `id` field wherever the file sits (docs/HARNESS.md, "Profiles").
    where: 'profiles/**/*.yaml',
    mediaType: 'application/yaml',
    format: 'yaml',
    frontMatterRequired: false,
    schema: KIND_SCHEMAS.profile,
    match: nestedYaml('profiles'),
    identity: (pathIdentity, metadata) => stringField(metadata, 'id') ?? pathIdentity,
    title: (identity) => identity,
    description: yamlDescription,
  },
  policy: {
    kind: 'policy',
    where: 'policy.yaml',
    mediaType: 'application/yaml',
    format: 'yaml',
    frontMatterRequired: false,
    schema: KIND_SCHEMAS.policy,
    match: (relative) => (relative === 'policy.yaml' ? 'policy' : undefined),
    identity: () => 'policy',
    title: () => 'policy',
    description: yamlDescription,
  },
};

// The first path segment decides the only kind a path can be, so matching is one lookup.
const KIND_BY_TOP: ReadonlyMap<string, KindSpec> = new Map([
  ['rules', KINDS.rule],
  ['skills', KINDS.skill],
  ['prompts', KINDS.prompt],
  ['workflows', KINDS.workflow],
  ['adrs', KINDS.adr],
  ['knowledge', KINDS.document],
  ['profiles', KINDS.profile],
  ['policy.yaml', KINDS.policy],
]);

/** The kind and path identity of `relative` (below the repo path), if it is an enabled kind's file. */
export function matchKind(
  relative: string,
  enabled: ReadonlySet<ObjectKind>,
): { spec: KindSpec; pathIdentity: string } | undefined {
  const slash = relative.indexOf('/');
  const spec = KIND_BY_TOP.get(slash === -1 ? relative : relative.slice(0, slash));
  if (spec === undefined || !enabled.has(spec.kind)) return undefined;
  const pathIdentity = spec.match(relative);
  return pathIdentity === undefined ? undefined : { spec, pathIdentity };
}

/**
 * True when `relative` (below the repo path) is where a directory holding files of an enabled kind
 * could be — `rules/shared`, `knowledge`, `skills/x`. A symbolic link there is diagnosed even
 * though the link itself matches no file pattern, because following it could serve objects.
 */
export function mayHoldKind(relative: string, enabled: ReadonlySet<ObjectKind>): boolean {
  return ['probe.md', 'probe.yaml', 'SKILL.md', 'probe/SKILL.md'].some(
    (probe) => matchKind(`${relative}/${probe}`, enabled) !== undefined,
  );
}

/** `majordomus://<kind>/<identity>`, each identity segment percent-encoded where it must be. */
export function objectUri(kind: ObjectKind, identity: string): string {
  return `majordomus://${kind}/${identity.split('/').map(encodeURIComponent).join('/')}`;
}

/** `<kind>.<identity>` */
export function objectId(kind: ObjectKind, identity: string): string {
  return `${kind}.${identity}`;
}

/** The outcome of validating metadata against a kind's schema. */
export type MetadataCheck =
  | { ok: true; metadata: Record<string, unknown> }
  | { ok: false; problems: Array<{ code: Extract<DiagnosticCode, 'unknown_key' | 'schema_violation'>; message: string }> };

/** Validates `value` with the kind's schema; unknown keys and other violations are reported apart. */
export function checkMetadata(spec: KindSpec, value: Record<string, unknown>, where: string): MetadataCheck {
  const result = spec.schema.safeParse(value);
  if (result.success) return { ok: true, metadata: result.data as Record<string, unknown> };
  const unknown: string[] = [];
  const violations: string[] = [];
  for (const issue of result.error.issues) {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) unknown.push(at === '' ? `"${key}"` : `"${at}.${key}"`);
    } else {
      violations.push(`${at === '' ? '(root)' : at}: ${issue.message}`);
    }
  }
  const problems: Array<{ code: 'unknown_key' | 'schema_violation'; message: string }> = [];
  if (unknown.length > 0) {
    problems.push({
      code: 'unknown_key',
      message: `unknown ${unknown.length === 1 ? 'key' : 'keys'} ${unknown.join(', ')} in ${where} (a ${spec.kind} allows: ${Object.keys(spec.schema.shape).join(', ')})`,
    });
  }
  if (violations.length > 0) {
    problems.push({ code: 'schema_violation', message: `${where} violates the ${spec.kind} schema: ${violations.join('; ')}` });
  }
  return { ok: false, problems };
}
