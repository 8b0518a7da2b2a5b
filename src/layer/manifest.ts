/**
 * `.ai/manifest.yaml`: read, parse and validate strictly. Any problem is fatal
 * (MAJ_MANIFEST_INVALID) and names the file: a layer whose contract cannot be read is not served.
 *
 * This is the one validator of the manifest, and every `mcp` runs it before it derives the lease
 * path from `local.path` — bridges included. That is why it is written out by hand rather than as
 * a zod schema like the kinds: loading zod costs a bridge more than the rest of its cold start
 * (docs/PERFORMANCE.md holds the bar), and four keys are checked plainly in a few lines.
 */
import { posix } from 'node:path';
import { MajordomusError } from '../platform/errors.js';
import { isMapping, parseYaml } from './front-matter.js';
import { DEFAULT_LOCAL_PATH } from './identity.js';
import { insidePath, readRegular } from '../platform/confine.js';
import { OBJECT_KINDS, type ObjectKind } from './types.js';

export const MANIFEST_SCHEMA_ID = 'ai-repository/v1';
export { MANIFEST_PATH } from './identity.js';

/** A manifest is a few lines; anything larger is refused before it is parsed. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

export const DEFAULT_REPO_PATH = '.ai/repo';
const TOP_KEYS = ['schema', 'repo', 'local', 'sections', 'federation'];

/** The manifest as the index uses it: normalised paths, the enabled kinds in table order. */
export interface Manifest {
  schema: typeof MANIFEST_SCHEMA_ID;
  /** Relative to the root, `/` separators, no trailing slash. */
  repoPath: string;
  /** Relative to the root, `/` separators, no trailing slash. */
  localPath: string;
  sections: ObjectKind[];
  /**
   * `federation: {url?, repository?}`: the NATS server every checkout of the repository federates
   * its board through (`MAJORDOMUS_FEDERATION_URL` wins), and the repository's name there (default:
   * its root commit). docs/SCALE.md.
   */
  federation: { url: string | null; repository: string | null };
}

function normalise(path: string): string {
  return posix.normalize(path).replace(/\/+$/, '');
}

/** Why `value` is not a path below the root that a half may name, or undefined when it is one. */
function layerPathProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
  if (value.includes('\\') || posix.isAbsolute(value)) return 'must be a relative path with "/" separators';
  const normal = normalise(value);
  // Judged against a stand-in root: the checkout's own confinement decides what stays below it.
  const below = insidePath('/root', posix.join('/root', normal));
  if (below === undefined || below === '') return 'must name a directory below the root';
  // git's own directory is never part of a layer, neither to serve nor to write state into
  // (compared without case: on macOS `.GIT` is the same directory).
  if (normal.split('/').some((segment) => segment.toLowerCase() === '.git')) return 'must not be .git or inside a .git directory';
  return undefined;
}

function unknownKeys(value: Record<string, unknown>, known: readonly string[], at: string): string | undefined {
  const keys = Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) => `"${at}${key}"`);
  return keys.length === 0 ? undefined : `unknown ${keys.length === 1 ? 'key' : 'keys'} ${keys.join(', ')}`;
}

/** One half (`repo` or `local`): `{path}`, or absent for the default. Pushes problems; answers the normalised path. */
function half(value: unknown, name: 'repo' | 'local', fallback: string, problems: string[]): string | undefined {
  if (value === undefined) return fallback;
  if (!isMapping(value)) {
    problems.push(`${name}: must be a mapping with "path"`);
    return undefined;
  }
  const extra = unknownKeys(value, ['path'], `${name}.`);
  if (extra !== undefined) problems.push(extra);
  const problem = layerPathProblem(value.path);
  if (problem !== undefined) {
    problems.push(`${name}.path: ${problem}`);
    return undefined;
  }
  return normalise(value.path as string);
}

function sectionsOf(value: unknown, problems: string[]): ObjectKind[] {
  if (value === undefined) return [...OBJECT_KINDS];
  if (!Array.isArray(value)) {
    problems.push(`sections: must be a list of kinds (${OBJECT_KINDS.join(', ')})`);
    return [];
  }
  const seen = new Set<unknown>();
  value.forEach((section: unknown, index) => {
    if (!(OBJECT_KINDS as readonly unknown[]).includes(section)) {
      problems.push(`sections.${index}: ${JSON.stringify(section)} is not a kind (${OBJECT_KINDS.join(', ')})`);
    } else if (seen.has(section)) {
      problems.push(`sections: "${String(section)}" is listed twice`);
    }
    seen.add(section);
  });
  return OBJECT_KINDS.filter((kind) => seen.has(kind));
}

/** Validates a parsed manifest value; `file` names the manifest in the error. */
export function parseManifest(value: unknown, file: string): Manifest {
  if (!isMapping(value)) {
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${file}: the manifest must be a YAML mapping with "schema: ${MANIFEST_SCHEMA_ID}"`);
  }
  const problems: string[] = [];
  const extra = unknownKeys(value, TOP_KEYS, '');
  if (extra !== undefined) problems.push(extra);
  if (value.schema !== MANIFEST_SCHEMA_ID) {
    problems.push(`schema: must be "${MANIFEST_SCHEMA_ID}", not ${value.schema === undefined ? 'missing' : JSON.stringify(value.schema)}`);
  }
  const repo = half(value.repo, 'repo', DEFAULT_REPO_PATH, problems);
  const local = half(value.local, 'local', DEFAULT_LOCAL_PATH, problems);
  const sections = sectionsOf(value.sections, problems);
  if (repo !== undefined && local !== undefined) {
    // The local half is written to (the lease); inside the repo half it would land in the served,
    // tracked tree.
    if (local === repo || local.startsWith(`${repo}/`)) problems.push(`local.path: must not be inside the repo half (${repo}), nor be it`);
    else if (repo.startsWith(`${local}/`)) problems.push('local.path: the local half must not contain the repo half');
  }
  if (problems.length > 0 || repo === undefined || local === undefined) {
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${file}: invalid manifest: ${problems.join('; ')}`);
  }
  const federation = federationOf(value.federation, problems);
  if (problems.length > 0) throw new MajordomusError('MAJ_MANIFEST_INVALID', `${file}: invalid manifest: ${problems.join('; ')}`);
  return { schema: MANIFEST_SCHEMA_ID, repoPath: repo, localPath: local, sections, federation };
}

/** A repository's name on the broker: what NATS subjects and bucket names may carry. */
export const FEDERATION_REPOSITORY = /^[A-Za-z0-9_-]{1,64}$/;

function federationOf(value: unknown, problems: string[]): Manifest['federation'] {
  const none = { url: null, repository: null };
  if (value === undefined || value === null) return none;
  if (!isMapping(value)) {
    problems.push('federation: must be a mapping with url and/or repository');
    return none;
  }
  const extra = unknownKeys(value, ['url', 'repository'], 'federation.');
  if (extra !== undefined) problems.push(extra);
  const url = value.url === undefined ? null : value.url;
  if (url !== null && (typeof url !== 'string' || !/^(nats|tls):\/\/[^\s]+$|^[A-Za-z0-9.-]+:\d+$/.test(url))) problems.push('federation.url: must be a NATS URL such as nats://host:4222');
  const repository = value.repository === undefined ? null : value.repository;
  if (repository !== null && (typeof repository !== 'string' || !FEDERATION_REPOSITORY.test(repository))) {
    problems.push('federation.repository: must be 1 to 64 letters, digits, "_" or "-"');
  }
  return { url: typeof url === 'string' ? url : null, repository: typeof repository === 'string' ? repository : null };
}

/**
 * The manifest's bytes. Never opens anything but a regular file: a FIFO would block the open (and
 * the process with it), a device could be endless, a link could lead anywhere.
 */
async function readManifestBytes(manifestPath: string): Promise<Buffer> {
  const read = await readRegular(manifestPath, MAX_MANIFEST_BYTES);
  if (read.ok) return read.bytes;
  const why =
    read.reason === 'symlink'
      ? 'the manifest is a symbolic link; it must be a regular file (links are never followed)'
      : read.reason === 'too_large'
        ? `the manifest is over the ${MAX_MANIFEST_BYTES}-byte (64 KiB) limit; it was not read`
        : read.reason === 'not_regular'
          ? `the manifest ${read.detail}`
          : `cannot read the manifest: ${read.detail}`;
  throw new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: ${why}`);
}

/** Reads and validates the manifest at `manifestPath`; every failure is MAJ_MANIFEST_INVALID. */
export async function readManifest(manifestPath: string): Promise<Manifest> {
  const bytes = await readManifestBytes(manifestPath);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: the manifest is not valid UTF-8`, { cause: error });
  }
  const parsed = parseYaml(text);
  if (!parsed.ok) throw new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: malformed YAML: ${parsed.message}`);
  return parseManifest(parsed.value, manifestPath);
}
