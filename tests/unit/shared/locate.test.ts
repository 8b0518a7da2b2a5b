/**
 * Finding the checkout (src/shared/locate.ts). Covers:
 * - the manifest is validated before the lease path is derived from it: an invalid one is
 *   MAJ_MANIFEST_INVALID, and a custom local.path gives the lease path below it;
 * - a lease at the default place that names this manifest exactly as lstat sees it is taken as
 *   proof of an earlier validation (no YAML parsed: a bridge's cold start);
 * - any edit to the manifest, or a lease naming another manifest or another root, means the
 *   manifest is read and validated again.
 */
import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import { locateCheckout } from '../../../src/shared/locate.js';

let root: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-locate-')));
  mkdirSync(join(root, '.ai'), { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function writeManifest(text: string): void {
  writeFileSync(join(root, '.ai/manifest.yaml'), text);
}

function fingerprint(): string {
  const info = lstatSync(join(root, '.ai/manifest.yaml'), { bigint: true });
  return [info.dev, info.ino, info.size, info.mtimeNs, info.ctimeNs].join(':');
}

function writeLease(fields: Record<string, unknown>): void {
  mkdirSync(join(root, '.ai/local/state/mcp'), { recursive: true });
  writeFileSync(join(root, '.ai/local/state/mcp/server.json'), JSON.stringify({ schema: 'majordomus-mcp-lease/v1', pid: process.pid, token: 't', url: null, root, ...fields }));
}

async function refusal(): Promise<MajordomusError> {
  const error = await locateCheckout(root).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MajordomusError);
  return error as MajordomusError;
}

describe('locateCheckout', () => {
  it('validates the manifest before it derives the lease path, and follows a custom local.path', async () => {
    writeManifest('schema: ai-repository/v1\nlocal: {path: .ai/state}\n');
    const checkout = await locateCheckout(root);
    expect(checkout).toMatchObject({ root, localPath: '.ai/state', leasePath: join(root, '.ai/state/state/mcp/server.json'), manifestFingerprint: fingerprint() });
    writeManifest('schema: ai-repository/v1\nlocal: {path: ../ESCAPED}\n');
    expect((await refusal()).code).toBe('MAJ_MANIFEST_INVALID');
  });

  it('takes a lease naming this very manifest as proof it was validated, without reading the manifest', async () => {
    // Bytes no YAML parser accepts: only the lease can make this pass.
    writeManifest('schema: [unclosed\n');
    writeLease({ manifest: fingerprint() });
    const checkout = await locateCheckout(root);
    expect(checkout).toMatchObject({ localPath: '.ai/local', leasePath: join(root, '.ai/local/state/mcp/server.json') });
  });

  it('reads the manifest again when it changed since, or when the lease names another manifest or root', async () => {
    writeManifest('schema: [unclosed\n');
    writeLease({ manifest: '1:2:3:4:5' });
    expect((await refusal()).code).toBe('MAJ_MANIFEST_INVALID');
    writeLease({ manifest: fingerprint(), root: '/elsewhere' });
    expect((await refusal()).code).toBe('MAJ_MANIFEST_INVALID');
    writeLease({ manifest: fingerprint() });
    await locateCheckout(root);
    writeManifest('schema: [still unclosed\n');
    expect((await refusal()).code).toBe('MAJ_MANIFEST_INVALID');
  });
});
