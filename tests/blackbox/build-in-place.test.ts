/**
 * `npm run build` (scripts/build.mjs) under processes that run from dist/, black-box, in a copy of
 * the package (its sources, its build script, our node_modules linked):
 * - a bridge started before a rebuild that renamed the owner's chunk (a source changed) still takes
 *   over when its owner dies: the chunks it imports late are still there;
 * - a build that fails leaves the working dist/ as it was;
 * - files of an earlier build stay a day for the processes still running from them, then go.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutCoverage } from '../helpers/coverage-env.js';
import { spawnCli, type CliProcess } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { SOURCE_PARTS, copyPackage } from '../helpers/package-copy.js';
import { ATTACHED, RawMcp, SERVING_HTTP, initializeBody, waitForLog } from '../helpers/shared.js';

const execFileAsync = promisify(execFile);
const BUILD_TIMEOUT_MS = 60_000;
const OWNER_SOURCE = 'src/hub/owner.ts';
const CHUNKS = 'dist/src/chunks';

/** The copy's build; the bundler is not ours to measure. */
async function buildCopy(pkg: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['scripts/build.mjs'], { cwd: pkg, env: withoutCoverage(process.env), encoding: 'utf8' });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const ownerChunks = async (pkg: string): Promise<string[]> => (await readdir(join(pkg, CHUNKS))).filter((name) => /^owner-.*\.js$/.test(name)).sort();

describe('npm run build under running processes', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let repo: FixtureRepo;
  let pkg: string;
  let main: string;
  const started: CliProcess[] = [];

  beforeAll(async () => {
    temp = await makeTempDir('majordomus-build-in-place-');
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/r.md': '# R\n\nA rule.\n' } });
    pkg = await copyPackage(temp.path, SOURCE_PARTS, { git: true });
    main = join(pkg, 'dist/src/cli/main.js');
    const first = await buildCopy(pkg);
    expect(first.code, first.output).toBe(0);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(started.map((cli) => cli.stop(3_000)));
    await repo?.cleanup();
    await temp?.cleanup();
  });

  const mcp = (): RawMcp => {
    const cli = spawnCli(['mcp', '--http-port', '0'], { cwd: repo.root, main, env: withoutCoverage(process.env) });
    started.push(cli);
    return new RawMcp(cli);
  };

  it(
    'lets a bridge started before a rebuild take over from its killed owner with the chunks of its own build',
    async () => {
      const owner = mcp();
      expect(await owner.exchange(initializeBody('owner', 1), 1)).toContain('"result"');
      await waitForLog(() => owner.stderr(), SERVING_HTTP);
      const bridge = mcp();
      expect(await bridge.exchange(initializeBody('bridge', 1), 1)).toContain('"result"');
      await waitForLog(() => bridge.stderr(), ATTACHED);

      const before = await ownerChunks(pkg);
      const source = await readFile(join(pkg, OWNER_SOURCE), 'utf8');
      const changed = source.replace('and removed the lease', 'and removed its lease');
      expect(changed, `${OWNER_SOURCE} no longer says "and removed the lease"`).not.toBe(source);
      await writeFile(join(pkg, OWNER_SOURCE), changed);
      const rebuilt = await buildCopy(pkg);
      expect(rebuilt.code, rebuilt.output).toBe(0);
      const after = await ownerChunks(pkg);
      expect(after.filter((name) => !before.includes(name)), 'the rebuild wrote a new owner chunk').toHaveLength(1);
      for (const name of before) expect(existsSync(join(pkg, CHUNKS, name)), `${name} of the running build is kept`).toBe(true);

      process.kill(owner.pid, 'SIGKILL');
      await owner.cli.exited; // a request the dying owner may have run is not re-sent; one after its death is
      const answer = JSON.parse(await bridge.exchange(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'majordomus_peers', arguments: {} } }), 2)) as {
        result?: { isError?: boolean };
        error?: unknown;
      };
      expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      expect(answer.result?.isError).not.toBe(true);
      await waitForLog(() => bridge.stderr(), `took over as the shared server of ${repo.root}`);
      expect(bridge.stderr()).not.toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'leaves the working dist/ as it was when the build fails',
    async () => {
      const entry = join(pkg, 'src/cli/main.ts');
      const source = await readFile(entry, 'utf8');
      const built = (await stat(main)).mtimeMs;
      await writeFile(entry, `${source}\nexport const = ;\n`);
      try {
        const failed = await buildCopy(pkg);
        expect(failed.code, failed.output).not.toBe(0);
        expect(failed.output).toMatch(/src\/cli\/main\.ts/);
      } finally {
        await writeFile(entry, source);
      }
      expect((await stat(main)).mtimeMs).toBe(built);
      expect((await readdir(pkg)).filter((name) => name.startsWith('.dist-staging-'))).toEqual([]);
      const version = await execFileAsync(process.execPath, [main, '--version'], { env: withoutCoverage(process.env), encoding: 'utf8' });
      expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'removes a file of an earlier build once no build has written it for a day, and keeps a younger one',
    async () => {
      const old = join(pkg, CHUNKS, 'gone-AAAAAAAA.js');
      const young = join(pkg, CHUNKS, 'kept-BBBBBBBB.js');
      await writeFile(old, 'export {};\n');
      await writeFile(young, 'export {};\n');
      const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
      await utimes(old, twoDaysAgo, twoDaysAgo);
      const rebuilt = await buildCopy(pkg);
      expect(rebuilt.code, rebuilt.output).toBe(0);
      expect(existsSync(old)).toBe(false);
      expect(existsSync(young)).toBe(true);
      expect(rebuilt.output).toMatch(/files of earlier builds: \d+ removed, \d+ kept for a day/);
    },
    BUILD_TIMEOUT_MS,
  );
});
