/**
 * readSpawnedCoverage, on what real processes leave in a NODE_V8_COVERAGE folder:
 * - the executable's coverage comes back keyed by its TypeScript sources (through the bundler's source
 *   maps), never by dist/ or node_modules paths;
 * - two runs of the executable are summed; a node process that ran none of the package's code is
 *   not counted as a process;
 * - a file still being written (not JSON yet) is left out and counted as unfinished, the others
 *   are read as before;
 * - an empty or missing folder gives no file and no process.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { readSpawnedCoverage } from '../../coverage/spawned-coverage.js';
import { PACKAGE_ROOT, runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

const execFileAsync = promisify(execFile);

describe('readSpawnedCoverage', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function tempDir(): Promise<string> {
    const dir = await makeTempDir('majordomus-coverage-');
    cleanups.push(dir.cleanup);
    return dir.path;
  }

  it('maps two runs of the executable onto src/*.ts and sums them, skipping a process that ran none of it', async () => {
    const coverage = await tempDir();
    const cwd = await tempDir();
    const env = { NODE_V8_COVERAGE: coverage };
    for (let run = 0; run < 2; run += 1) {
      const result = await runCli(['capabilities', 'list'], { cwd, env });
      expect(result.code).toBe(0);
    }
    await execFileAsync(process.execPath, ['-e', 'void 0'], { env: { ...process.env, ...env } });

    const spawned = await readSpawnedCoverage(coverage, PACKAGE_ROOT);

    expect(spawned.processes).toBe(2);
    const files = [...spawned.files.keys()];
    for (const file of files) expect(relative(PACKAGE_ROOT, file)).toMatch(/^(src|workers)\/[\w/.-]+\.ts$/);
    const main = spawned.files.get(join(PACKAGE_ROOT, 'src/cli/main.ts'));
    expect(main).toBeDefined();
    expect(Math.max(...Object.values(main?.s ?? {}))).toBe(2);
    expect(Object.values(main?.f ?? {})).toContain(2);
    const capabilities = spawned.files.get(join(PACKAGE_ROOT, 'src/cli/commands/capabilities.ts'));
    expect(Object.values(capabilities?.s ?? {}).some((hits) => hits > 0)).toBe(true);
  });

  it('leaves out a file a process is still writing, counting it, and reads the others', async () => {
    const coverage = await tempDir();
    const cwd = await tempDir();
    expect((await runCli(['capabilities', 'list'], { cwd, env: { NODE_V8_COVERAGE: coverage } })).code).toBe(0);
    const [written] = (await readdir(coverage)).filter((name) => name.endsWith('.json'));
    const text = await readFile(join(coverage, written as string), 'utf8');
    // What a reader finds partway through a process's write at its exit: it has named a script of ours.
    const ours = text.indexOf(pathToFileURL(join(PACKAGE_ROOT, 'dist/src/')).href);
    expect(ours).toBeGreaterThan(0);
    await writeFile(join(coverage, 'coverage-99999-1-0.json'), text.slice(0, ours + 100));

    const spawned = await readSpawnedCoverage(coverage, PACKAGE_ROOT);

    expect(spawned.unfinished).toBe(1);
    expect(spawned.processes).toBe(1);
    expect(spawned.files.get(join(PACKAGE_ROOT, 'src/cli/main.ts'))).toBeDefined();
  });

  it('finds nothing in an empty folder or a missing one', async () => {
    const empty = await tempDir();
    expect(await readSpawnedCoverage(empty, PACKAGE_ROOT)).toEqual({ files: new Map(), processes: 0, unfinished: 0 });
    expect(await readSpawnedCoverage(join(empty, 'missing'), PACKAGE_ROOT)).toEqual({ files: new Map(), processes: 0, unfinished: 0 });
  });
});
