/**
 * `.ai/manifest.yaml`: read, parse and validate with a strict schema. Any problem is fatal
 * (MAJ_MANIFEST_INVALID) and names the file: a layer whose contract cannot be read is not served.
 */
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { z } from 'zod';
import { MajordomusError, errorMessage } from '../errors.js';
import { isMapping, parseYaml } from './front-matter.js';
import { OBJECT_KINDS, type ObjectKind } from './types.js';

export const MANIFEST_SCHEMA_ID = 'ai-repository/v1';
export { MANIFEST_PATH } from './identity.js';

/** A path below the root: relative, `/`-separated, normalised, never leaving the root. */
const layerPath = z
  .string()
  .min(1)
  .refine((value) => !value.includes('\\') && !posix.isAbsolute(value), 'must be a relative path with "/" separators')
  .refine((value) => {
    const normal = posix.normalize(value).replace(/\/+$/, '');
    return normal !== '.' && normal !== '..' && !normal.startsWith('../');
  }, 'must name a directory below the root');

export const ManifestSchema = z
  .strictObject({
    schema: z.literal(MANIFEST_SCHEMA_ID),
    repo: z.strictObject({ path: layerPath }).default({ path: '.ai/repo' }).describe('The tracked half of the layer.'),
    local: z
      .strictObject({ path: layerPath })
      .default({ path: '.ai/local' })
      .describe('The git-ignored half: operational state, never served.'),
    sections: z
      .array(z.enum(OBJECT_KINDS))
      .optional()
      .describe('The kinds this layer serves; all of them when omitted.'),
  })
  .superRefine((manifest, context) => {
    const repo = normalise(manifest.repo.path);
    const local = normalise(manifest.local.path);
    if (repo === local || repo.startsWith(`${local}/`)) {
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

/** Reads and validates the manifest at `manifestPath`; every failure is MAJ_MANIFEST_INVALID. */
export async function readManifest(manifestPath: string): Promise<Manifest> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(manifestPath));
  } catch (error) {
    throw new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: cannot read the manifest: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const parsed = parseYaml(text);
  if (!parsed.ok) throw new MajordomusError('MAJ_MANIFEST_INVALID', `${manifestPath}: malformed YAML: ${parsed.message}`);
  return parseManifest(parsed.value, manifestPath);
}
