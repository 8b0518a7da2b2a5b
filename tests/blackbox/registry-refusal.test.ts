/**
 * A registry that breaks its own rules, black-box: a throwaway copy of the built package whose
 * bundled capabilities give objects.get the MCP tool name of objects.list. Every command refuses it
 * and names both parties (`duplicate tool name "majordomus_list": objects.list, objects.get`):
 * - `capabilities validate` exits 10 with MAJ_VALIDATION_FAILED;
 * - `capabilities list`, `mcp --inspect` and `generate --check` exit 13 with MAJ_REGISTRY_INVALID;
 * - `serve` and `mcp` exit 13 with MAJ_REGISTRY_INVALID and leave no lease behind;
 * - nothing reaches stdout.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { BUILT_PARTS, copyPackage } from '../helpers/package-copy.js';

/** Where the build puts the capabilities: among the shared scripts, one of which declares objects.get's tool. */
const CHUNKS = 'dist/src/chunks';
const GET_TOOL = /tool: (["'])majordomus_get\1/;
const DUPLICATE = /duplicate tool name "majordomus_list": (objects\.list, objects\.get|objects\.get, objects\.list)/;

describe('a registry whose capabilities share a tool name', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let repo: FixtureRepo;
  let main: string;

  const run = (args: readonly string[]) => runCli(args, { cwd: repo.root, main });

  beforeAll(async () => {
    temp = await makeTempDir('majordomus-registry-');
    const pkg = await copyPackage(temp.path, BUILT_PARTS);
    const scripts = (await readdir(join(pkg, CHUNKS))).filter((name) => name.endsWith('.js'));
    const declaring: string[] = [];
    for (const name of scripts) {
      const source = await readFile(join(pkg, CHUNKS, name), 'utf8');
      if (!GET_TOOL.test(source)) continue;
      declaring.push(name);
      await writeFile(join(pkg, CHUNKS, name), source.replace(GET_TOOL, 'tool: $1majordomus_list$1'));
    }
    expect(declaring, `exactly one script under ${CHUNKS} should declare majordomus_get`).toHaveLength(1);
    main = join(pkg, 'dist/src/cli/main.js');
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/r.md': '# R\n\nA rule.\n' } });
  });

  afterAll(async () => {
    await repo?.cleanup();
    await temp?.cleanup();
  });

  it('fails capabilities validate with exit 10 and MAJ_VALIDATION_FAILED naming both capabilities', async () => {
    const result = await run(['capabilities', 'validate']);
    expect(result.code, result.stderr).toBe(10);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_VALIDATION_FAILED: the capability registry refuses to build');
    expect(result.stderr).toMatch(DUPLICATE);
  });

  it.each([['capabilities', 'list'], ['mcp', '--inspect'], ['generate', '--check']])(
    'refuses %s %s with exit 13 and MAJ_REGISTRY_INVALID naming both capabilities',
    async (...args) => {
      const result = await run(args);
      expect(result.code, result.stderr).toBe(13);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('MAJ_REGISTRY_INVALID: the capability registry refuses to build');
      expect(result.stderr).toMatch(DUPLICATE);
    },
  );

  it.each([
    ['serve', '--port', '0'],
    ['mcp', '--http-port', '0'],
  ])('refuses %s with exit 13 and MAJ_REGISTRY_INVALID, and leaves no lease', async (...args) => {
    const result = await run(args);
    expect(result.code, result.stderr).toBe(13);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_REGISTRY_INVALID');
    expect(result.stderr).toMatch(DUPLICATE);
    expect(existsSync(join(repo.root, '.ai/local/state/mcp/server.json'))).toBe(false);
  });
});
