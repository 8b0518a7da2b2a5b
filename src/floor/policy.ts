/**
 * The floor of a checkout as its files say it, for a process that has no layer loaded (the
 * executor): the manifest's local half and the policy's `permissions.deny` globs, read straight
 * from `.ai/manifest.yaml` and `<repo>/policy.yaml` rather than by loading the whole layer. A
 * serving process builds the same floor from its layer (`floorOfLayer`).
 *
 * A policy that exists but cannot be read is an error, never "no deny globs": nothing may run with
 * less protection than the checkout asked for.
 */
import { join } from 'node:path';
import { isMapping, parseYaml } from '../layer/front-matter.js';
import { MANIFEST_PATH } from '../layer/identity.js';
import { PolicyMetadataSchema, type KindMetadata } from '../layer/kinds.js';
import { readManifest } from '../layer/manifest.js';
import type { LayerView } from '../layer/view.js';
import { readRegular } from '../platform/confine.js';
import { Floor, type FloorRules } from './rules.js';

const MAX_POLICY_BYTES = 1024 * 1024;

/** The policy file is there but unusable. */
export class PolicyUnreadable extends Error {
  override name = 'PolicyUnreadable';
}

/** The deny globs of the checkout at `root` ([] when it has no policy, or its manifest leaves policies out). */
export async function policyDenyGlobs(root: string): Promise<string[]> {
  return (await floorRulesOf(root)).deny;
}

/** What the checkout at `root` protects beyond the built-in rules: its local half and its policy's deny globs. */
export async function floorRulesOf(root: string): Promise<FloorRules & { deny: string[] }> {
  const manifest = await readManifest(join(root, MANIFEST_PATH));
  const localPath = manifest.localPath;
  if (!manifest.sections.includes('policy')) return { localPath, deny: [] };
  const path = join(root, manifest.repoPath, 'policy.yaml');
  const refuse = (why: string): PolicyUnreadable => new PolicyUnreadable(`the policy ${path} ${why}; nothing runs without the protection it asks for`);
  const read = await readRegular(path, MAX_POLICY_BYTES);
  if (!read.ok) {
    if (read.reason === 'missing') return { localPath, deny: [] };
    if (read.reason === 'symlink') throw refuse('is a symbolic link (links are never followed)');
    if (read.reason === 'too_large') throw refuse('is over 1 MiB');
    throw refuse(read.reason === 'not_regular' ? read.detail : `cannot be read (${read.detail})`);
  }
  const parsed = parseYaml(read.bytes.toString('utf8'));
  if (!parsed.ok) throw refuse(`is not valid YAML: ${parsed.message}`);
  if (parsed.value === null || parsed.value === undefined) return { localPath, deny: [] };
  if (!isMapping(parsed.value)) throw refuse('is not a YAML mapping');
  // Only the permissions are checked: a problem elsewhere in the policy does not concern the floor.
  const permissions = PolicyMetadataSchema.shape.permissions.safeParse(parsed.value.permissions);
  if (!permissions.success) throw refuse(`has invalid permissions: ${permissions.error.issues[0]?.message ?? 'invalid'}`);
  return { localPath, deny: permissions.data?.deny ?? [] };
}

/** The floor of the checkout at `root`, from its files. */
export async function floorOf(root: string): Promise<Floor> {
  return new Floor(await floorRulesOf(root));
}

/** The floor of a served layer: its local half and the deny globs of its policy object. */
export function floorOfLayer(layer: LayerView): Floor {
  const policy = layer.list({ kind: 'policy' })[0]?.metadata as KindMetadata['policy'] | undefined;
  return new Floor({ localPath: layer.index.localPath, deny: policy?.permissions?.deny ?? [] });
}
