/**
 * `majordomus generate`, black-box. It writes into the package's own docs/generated/, so every
 * test runs the executable of a throwaway copy of the built package (package.json, dist/,
 * docs/generated/, node_modules linked) and compares with the real package's files:
 * - `--check` with a stale file and a missing one exits 10 with MAJ_GENERATED_STALE naming exactly
 *   those two, and writes nothing;
 * - `generate` rewrites them byte-identical to the real package's, names each file it wrote on
 *   stderr, leaves the current one untouched, and `--check` passes after;
 * - `generate` recreates a missing docs/generated/ folder.
 */
import { existsSync } from 'node:fs';
import { appendFile, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import { BUILT_PARTS, copyPackage } from '../helpers/package-copy.js';

const GENERATED = 'docs/generated';
const STALE = `${GENERATED}/capabilities.md`;
const MISSING = `${GENERATED}/errors.md`;
const CURRENT = `${GENERATED}/openapi.json`;

describe('generate in a copy of the package', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let pkg: string;
  let main: string;

  const real = (path: string): Promise<Buffer> => readFile(join(PACKAGE_ROOT, path));
  const copied = (path: string): Promise<Buffer> => readFile(join(pkg, path));
  const generate = (...args: string[]) => runCli(['generate', ...args], { cwd: temp.path, main });

  beforeEach(async () => {
    temp = await makeTempDir('majordomus-generate-');
    pkg = await copyPackage(temp.path, BUILT_PARTS);
    main = join(pkg, 'dist/src/cli/main.js');
  });

  afterEach(async () => {
    await temp?.cleanup();
  });

  it('refuses a stale file and a missing one with exit 10, MAJ_GENERATED_STALE naming exactly those, and writes nothing', async () => {
    await appendFile(join(pkg, STALE), '\nedited by hand\n');
    await rm(join(pkg, MISSING));
    const staleBefore = await copied(STALE);

    const check = await generate('--check');
    expect(check.code, check.stderr).toBe(10);
    expect(check.stdout).toBe('');
    const refusal = /MAJ_GENERATED_STALE: stale: (.+); run `majordomus generate`/.exec(check.stderr);
    expect(refusal, check.stderr).not.toBeNull();
    expect(refusal?.[1]?.split(', ').sort()).toEqual([STALE, MISSING].sort());

    expect(await copied(STALE)).toEqual(staleBefore);
    expect(existsSync(join(pkg, MISSING))).toBe(false);
  });

  it('rewrites stale and missing files byte-identical to the package\'s, leaves the current one alone, and --check passes after', async () => {
    await appendFile(join(pkg, STALE), '\nedited by hand\n');
    await rm(join(pkg, MISSING));
    const currentBefore = await stat(join(pkg, CURRENT));

    const write = await generate();
    expect(write.code, write.stderr).toBe(0);
    expect(write.stdout).toBe('');
    expect(write.stderr).toContain(`wrote ${STALE}`);
    expect(write.stderr).toContain(`wrote ${MISSING}`);
    expect(write.stderr).not.toContain(`wrote ${CURRENT}`);

    expect(await copied(STALE)).toEqual(await real(STALE));
    expect(await copied(MISSING)).toEqual(await real(MISSING));
    expect((await stat(join(pkg, CURRENT))).mtimeMs).toBe(currentBefore.mtimeMs);

    const check = await generate('--check');
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toContain('docs/generated/ is up to date');
  });

  it('recreates a missing docs/generated/ folder, file for file', async () => {
    await rm(join(pkg, GENERATED), { recursive: true });
    const write = await generate();
    expect(write.code, write.stderr).toBe(0);
    const names = (await readdir(join(PACKAGE_ROOT, GENERATED))).sort();
    expect((await readdir(join(pkg, GENERATED))).sort()).toEqual(names);
    for (const name of names) expect(await copied(`${GENERATED}/${name}`), name).toEqual(await real(`${GENERATED}/${name}`));
  });
});
