/**
 * The policy's `permissions.deny` globs, which the executor's tools refuse on top of the permission
 * floor. Read straight from `<repo>/policy.yaml` (the manifest says where the repo half is) rather
 * than by loading the whole layer: one small file, parsed and checked against the policy schema.
 *
 * A policy that exists but cannot be read is an error, never "no deny globs": the executor must not
 * run with less protection than the checkout asked for.
 */
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../platform/errors.js';
import { isMapping, parseYaml } from '../layer/front-matter.js';
import { MANIFEST_PATH } from '../layer/identity.js';
import { PolicyMetadataSchema } from '../layer/kinds.js';
import { readManifest } from '../layer/manifest.js';
import { NO_FOLLOW_READ, nonRegularKind, readBounded } from '../platform/files.js';

const MAX_POLICY_BYTES = 1024 * 1024;

/** The policy file is there but unusable. */
export class PolicyUnreadable extends Error {
  override name = 'PolicyUnreadable';
}

/** The deny globs of the checkout at `root` ([] when it has no policy, or its manifest leaves policies out). */
export async function policyDenyGlobs(root: string): Promise<string[]> {
  const manifest = await readManifest(join(root, MANIFEST_PATH));
  if (!manifest.sections.includes('policy')) return [];
  const path = join(root, manifest.repoPath, 'policy.yaml');
  const refuse = (why: string): PolicyUnreadable => new PolicyUnreadable(`the policy ${path} ${why}; the executor does not run without the protection it asks for`);
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw refuse(`cannot be read (${errorMessage(error)})`);
  }
  if (info.isSymbolicLink()) throw refuse('is a symbolic link (links are never followed)');
  if (!info.isFile()) throw refuse(`is ${nonRegularKind(info)}, not a regular file`);
  let text: string;
  const handle = await open(path, NO_FOLLOW_READ).catch((error: unknown) => {
    throw refuse(`cannot be read (${errorMessage(error)})`);
  });
  try {
    const bytes = await readBounded(handle, info.size, MAX_POLICY_BYTES);
    if (bytes === undefined) throw refuse('is over 1 MiB');
    text = bytes.toString('utf8');
  } finally {
    await handle.close();
  }
  const parsed = parseYaml(text);
  if (!parsed.ok) throw refuse(`is not valid YAML: ${parsed.message}`);
  if (parsed.value === null || parsed.value === undefined) return [];
  if (!isMapping(parsed.value)) throw refuse('is not a YAML mapping');
  // Only the permissions are checked: a problem elsewhere in the policy does not concern the tools.
  const permissions = PolicyMetadataSchema.shape.permissions.safeParse(parsed.value.permissions);
  if (!permissions.success) throw refuse(`has invalid permissions: ${permissions.error.issues[0]?.message ?? 'invalid'}`);
  return permissions.data?.deny ?? [];
}
