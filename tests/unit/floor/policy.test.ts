/**
 * The policy's deny globs for the executor's tools. Covers: no policy → none; the globs of a valid
 * policy (other keys ignored); a manifest whose sections leave policies out → none; a policy that
 * is not YAML, has malformed permissions, or is a symbolic link → an error naming the file.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PolicyUnreadable, policyDenyGlobs } from '../../../src/floor/policy.js';
import { DEFAULT_MANIFEST, makeTempDir } from '../../helpers/fixture-repo.js';

const temps: { cleanup(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((t) => t.cleanup()));
});

async function checkout(policy: string | null, manifest = DEFAULT_MANIFEST): Promise<string> {
  const dir = await makeTempDir('majordomus-policy-');
  temps.push(dir);
  await mkdir(join(dir.path, '.ai/repo'), { recursive: true });
  await writeFile(join(dir.path, '.ai/manifest.yaml'), manifest);
  if (policy !== null) await writeFile(join(dir.path, '.ai/repo/policy.yaml'), policy);
  return dir.path;
}

async function refusal(root: string): Promise<string> {
  const error = await policyDenyGlobs(root).then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(PolicyUnreadable);
  return (error as Error).message;
}

describe('policyDenyGlobs', () => {
  it('finds none without a policy, and the deny globs of a valid one', async () => {
    expect(await policyDenyGlobs(await checkout(null))).toEqual([]);
    expect(await policyDenyGlobs(await checkout('description: p\n'))).toEqual([]);
    expect(await policyDenyGlobs(await checkout('permissions:\n  deny: ["config/prod/**", "*.sqlite"]\nharness: {max_sessions: 3}\n'))).toEqual(['config/prod/**', '*.sqlite']);
  });

  it('finds none when the manifest leaves policies out', async () => {
    const root = await checkout('permissions: {deny: [x]}\n', `${DEFAULT_MANIFEST}sections: [rule]\n`);
    expect(await policyDenyGlobs(root)).toEqual([]);
  });

  it('refuses a policy that is not YAML, has malformed permissions, or is a link, naming the file', async () => {
    const broken = await checkout('permissions: {deny: [x\n');
    expect(await refusal(broken)).toMatch(new RegExp(`^the policy ${join(broken, '.ai/repo/policy.yaml')} is not valid YAML: `));
    expect(await refusal(await checkout('permissions: {deny: "x"}\n'))).toContain('has invalid permissions');
    const linked = await checkout(null);
    await writeFile(join(linked, 'elsewhere.yaml'), 'permissions: {deny: [x]}\n');
    await symlink(join(linked, 'elsewhere.yaml'), join(linked, '.ai/repo/policy.yaml'));
    expect(await refusal(linked)).toContain('is a symbolic link');
  });
});
