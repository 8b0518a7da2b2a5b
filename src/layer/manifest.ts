/**
 * `.ai/manifest.yaml`: read, parse and validate with a strict schema. Any problem is fatal
 * (MAJ_MANIFEST_INVALID) and names the file: a layer whose contract cannot be read is not served.
 * This is the one validator of the manifest: the bridge path (`src/shared/locate.ts`) loads it
 * too, before it derives the lease path from `local.path`.
 */
import { lstat, open } from 'node:fs/promises';
import { posix } from 'node:path';
import { z } from 'zod';
import { MajordomusError, errorMessage } from '../errors.js';
import { isMapping, parseYaml } from './front-matter.js';
import { DEFAULT_LOCAL_PATH } from './identity.js';
import { NO_FOLLOW_READ, nonRegularKind, readBounded } from './regular-file.js';
import { OBJECT_KINDS, type ObjectKind } from './types.js';

export const MANIFEST_SCHEMA_ID = 'ai-repository/v1';
export { MANIFEST_PATH } from './identity.js';

/** A manifest is a few lines; anything larger is refused before it is parsed. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

/** A path below the root: relative, `/`-separated, normalised, never leaving the root. */
const layerPath = z
  .string()
  .min(1)
  .refine((value) => !value.includes('\\') && !posix.isAbsolute(value), 'must be a relative path with "/" separators')
  .refine((value) => {
    const normal = posix.normalize(value).replace(/\/+$/, '');
    return normal !== '.' && normal !== '..' && !normal.startsWith('../');
  }, 'must name a directory below the root')
  // git's own directory is never part of a layer, neither to serve nor to write state into
  // (case-insensitively: on macOS `.GIT` is the same directory).
  .refine((value) => !value.split('/').some((segment) => segment.toLowerCase() === '.git'), 'must not be .git or inside a .git directory');

export const ManifestSchema = z
  .strictObject({
    schema: z.literal(MANIFEST_SCHEMA_ID),
    repo: z.strictObject({ path: layerPath }).default({ path: '.ai/repo' }).describe('The tracked half of the layer.'),
    local: z
      .strictObject({ path: layerPath })
      .default({ path: DEFAULT_LOCAL_PATH })
      .describe('The git-ignored half: operational state, never served.'),
    sections: z
      .array(z.enum(OBJECT_KINDS))
      .optional()
      .describe('The kinds this layer serves; all of them when omitted.'),
  })
  .superRefine((manifest, context) => {
    const repo = normalise(manifest.repo.path);
    const local = normalise(manifest.local.path);
    // The local half is written to (the lease); inside the repo half it would land in the served,
    // tracked tree.
    if (local === repo || local.startsWith(`${repo}/`)) {
      context.addIssue({ code: 'custom', path: ['local', 'path'], message: `must not be inside the repo half (${repo}), nor be it` });
    } else if (repo.startsWith(`${local}/`)) {
      context.addIssue({ code: 'custom', path: ['local', 'path'], message: 'the local half must not contain the repo half' });
    }
    const seen = new Set<string>();
    for (const section of manifest.sections ?? []) {
      if (seen.has(section)) context.addIssue({ code: 'custom', path: ['sections'], message: `"${section}" is listed twice` });
      seen.add(section);
    }
  });

/** The manifest as the index uses it: normalised paths, the enabled kinds in table order. */
export interface Manifest {
  schema: typeof MANIFEST_SCHEMA_ID;
  /** Relative to the root, `/` separators, no trailing slash. */
  repoPath: string;
  /** Relative to the root, `/` separators, no trailing slash. */
  localPath: string;
  sections: ObjectKind[];
}

function normalise(path: string): string {
  return posix.normalize(path).replace(/\/+$/, '');
}

/** Validates a parsed manifest value; `file` names the manifest in the error. */
export function parseManifest(value: unknown, file: string): Manifest {
  if (!isMapping(value)) {
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${file}: the manifest must be a YAML mapping with "schema: ${MANIFEST_SCHEMA_ID}"`);
  }
  const result = ManifestSchema.safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const at = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((key) => (at === '' ? key : `${at}.${key}`));
        return `unknown ${keys.length === 1 ? 'key' : 'keys'} ${keys.map((key) => `"${key}"`).join(', ')}`;
      }
      return `${at === '' ? '(root)' : at}: ${issue.message}`;
    });
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${file}: invalid manifest: ${problems.join('; ')}`);
  }
  const enabled = new Set(result.data.sections ?? OBJECT_KINDS);
  return {
    schema: MANIFEST_SCHEMA_ID,
    repoPath: normalise(result.data.repo.path),
    localPath: normalise(result.data.local.path),
    sections: OBJECT_KINDS.filter((kind) => enabled.has(kind)),
  };
}

/**
 * The manifest's bytes. Never opens anything but a regular file: a FIFO would block the open (and
 * the process with it), a device could be endless, a link could lead anywhere.
 */
async function readManifestBytes(manifestPath: string): Promise<Buffer> {
  const refuse = (why: string, cause?: unknown): MajordomusError =>
    new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: ${why}`, cause === undefined ? undefined : { cause });
  let info;
  try {
    info = await lstat(manifestPath);
  } catch (error) {
    throw refuse(`cannot read the manifest: ${errorMessage(error)}`, error);
  }
  if (info.isSymbolicLink()) throw refuse('the manifest is a symbolic link; it must be a regular file (links are never followed)');
  if (!info.isFile()) throw refuse(`the manifest is ${nonRegularKind(info)}, not a regular file`);
  const tooLarge = `the manifest is over the ${MAX_MANIFEST_BYTES}-byte (64 KiB) limit; it was not read`;
  if (info.size > MAX_MANIFEST_BYTES) throw refuse(tooLarge);
  let handle;
  try {
    handle = await open(manifestPath, NO_FOLLOW_READ);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw refuse('the manifest became a symbolic link while it was read', error);
    throw refuse(`cannot read the manifest: ${errorMessage(error)}`, error);
  }
  try {
    // Swapped for something else between lstat and open: judge what was opened.
    const opened = await handle.stat();
    if (!opened.isFile()) throw refuse(`the manifest is ${nonRegularKind(opened)}, not a regular file`);
    const bytes = await readBounded(handle, opened.size, MAX_MANIFEST_BYTES);
    if (bytes === undefined) throw refuse(tooLarge);
    return bytes;
  } catch (error) {
    if (error instanceof MajordomusError) throw error;
    throw refuse(`cannot read the manifest: ${errorMessage(error)}`, error);
  } finally {
    await handle.close();
  }
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
