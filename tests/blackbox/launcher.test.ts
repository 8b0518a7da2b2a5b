/**
 * The launcher `bin/majordomus-mcp` (SPEC §6, ADR 3 "Clients start it"), black-box, in a COPY of
 * the package in a temporary directory (package.json, package-lock.json, rolldown.config.mjs, scripts/, src/,
 * workers/, bin/, and node_modules as a symbolic link to ours), so the real dist/ is never touched.
 * In a source checkout (the copy is a git work tree with src/):
 * - a missing build is built with the real `npm run build`, its output on stderr; the client's
 *   initialize (written before the build finished) is answered and stdout holds only JSON-RPC;
 * - two launchers started together on a stale build: one builds, the other waits for it, and both
 *   servers answer;
 * - a current build runs as it is: no npm at all (a fake npm first on PATH records any call);
 * - a build older than a file under src/, workers/, rolldown.config.mjs, scripts/build.mjs, package.json
 *   or package-lock.json → `npm run build`
 *   (fake npm: the decision is the launcher's; the one real build above shows the build itself);
 * - a missing node_modules → `npm ci` (with the lock file) or `npm install` (without), on stderr;
 * - MAJORDOMUS_NO_BUILD: a missing build exits 12 with MAJ_NO_BUILD naming `npm run build`,
 *   nothing installed or built;
 * - a failing `npm ci` / `npm install` (a stand-in npm that exits 1) exits 12 with MAJ_NO_BUILD
 *   naming the command, npm's stdout on stderr, nothing built;
 * - sources that do not compile: the real `npm run build` (the package's package.json and
 *   rolldown.config.mjs, over a stand-in main.ts that imports a file that does not parse) fails,
 *   the launcher exits 12 with MAJ_NO_BUILD and the bundler's error on stderr, and no build is left
 *   for a later launch to run;
 * - MAJORDOMUS_BIN: exec'd with `mcp` and the arguments, nothing installed or built;
 * - the package root is found through a symbolic link to the launcher;
 * - in none of these does anything reach stdout before the server speaks;
 * - every client configuration parses and names bin/majordomus-mcp, which exists and is executable.
 * Nothing the launcher starts here is measured for coverage: the copy's dist/ is not this
 * checkout's, and npm and the bundler are not ours, so their environment has no NODE_V8_COVERAGE.
 * In an installed package (no .git: npm's tarball; files with npm's fixed old mtime, directories
 * with the install time, dependencies hoisted beside it):
 * - the build it shipped runs as it is, even with src/ newer than it: no npm, no build, nothing on
 *   stdout before the server's answer;
 * - without a build: exit 12, MAJ_NO_BUILD naming the missing build and what makes it no source
 *   checkout; nothing installed or built.
 */
import { execFile, spawn } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { access, copyFile, mkdir, readFile, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { withoutCoverage } from '../helpers/coverage-env.js';
import { SOURCE_PARTS, copyPackage } from '../helpers/package-copy.js';

const execFileAsync = promisify(execFile);

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LAUNCHER_RELATIVE = 'bin/majordomus-mcp';
const MAIN_RELATIVE = 'dist/src/cli/main.js';
const BUILD_TIMEOUT_MS = 120_000;
const RUN_TIMEOUT_MS = 30_000;

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'launcher-test', version: '1.0.0' } },
});

// A stand-in for npm that records each call, says something on its stdout (which the launcher
// must send to stderr), and does the least that lets the launcher go on.
const FAKE_NPM = `#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_NPM_LOG"
echo "fake npm $* (stdout)"
case "$1" in
  ci|install) ln -s "$FAKE_NPM_NODE_MODULES" node_modules ;;
  run) [ "$2" = build ] && touch dist/src/cli/main.js ;;
esac
exit 0
`;

// A stand-in for npm that records each call, says something on both streams and fails.
const FAILING_NPM = `#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_NPM_LOG"
echo "failing npm $* (stdout)"
echo "npm error: failing on purpose" >&2
exit 1
`;

// A stand-in for the executable: its arguments on stderr, nothing on stdout.
const FAKE_BIN = `#!/bin/sh
echo "fake majordomus: $*" >&2
exit 0
`;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  cwd: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Lines written to stdin; stdin is closed once `closeWhen` holds (at once by default). */
  lines?: readonly string[];
  closeWhen?: (stdout: string) => boolean;
  timeoutMs?: number;
}

/** The launcher's environment: ours without the variables it reads (nor coverage), plus `extra`. */
function launcherEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = withoutCoverage(process.env);
  for (const name of ['MAJORDOMUS_BIN', 'MAJORDOMUS_NO_BUILD', 'MAJORDOMUS_LOG']) delete env[name];
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Runs a launcher to completion; past the timeout it is killed and the run rejected. */
function runLauncher(launcher: string, args: readonly string[], options: RunOptions): Promise<Run> {
  const child = spawn(launcher, [...args], { cwd: options.cwd, env: launcherEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let stdinClosed = false;
  const closeWhen = options.closeWhen ?? (() => true);
  const maybeClose = (): void => {
    if (!stdinClosed && closeWhen(stdout)) {
      stdinClosed = true;
      child.stdin.end();
    }
  };
  child.stdin.on('error', () => {});
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    maybeClose();
  });
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  for (const line of options.lines ?? []) child.stdin.write(`${line}\n`);
  maybeClose();
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${launcher} ${args.join(' ')} did not end within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Every stdout line is a JSON-RPC 2.0 answer; returns them parsed. */
function jsonRpcFrames(stdout: string): Array<Record<string, unknown>> {
  expect(stdout.endsWith('\n'), `stdout ends mid-line:\n${stdout}`).toBe(true);
  return stdout
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const frame = JSON.parse(line) as Record<string, unknown>;
      expect(frame.jsonrpc, line).toBe('2.0');
      expect('result' in frame || 'error' in frame, line).toBe(true);
      return frame;
    });
}

/** Sets the times of `path` and, for a directory, of everything below it. */
async function setTreeTime(path: string, time: Date): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) await setTreeTime(join(path, entry), time);
  }
  await utimes(path, time, time);
}

describe('bin/majordomus-mcp', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let repo: FixtureRepo;
  let pkg: string;
  let launcher: string;
  let main: string;
  let fakeBinDir: string;
  let npmLog: string;
  /** The environment that puts the fake npm first on PATH. */
  let fakeNpmEnv: Record<string, string>;

  const npmCalls = async (): Promise<string[]> =>
    existsSync(npmLog) ? (await readFile(npmLog, 'utf8')).split('\n').filter(Boolean) : [];
  const mtime = async (path: string): Promise<number> => (await stat(path)).mtimeMs;

  beforeAll(async () => {
    temp = await makeTempDir('majordomus-launcher-');
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/launch.md': '# Launch\n\nThe launcher builds first.\n' } });
    // Sources, bin/ and a link to our node_modules; no dist/.
    pkg = await copyPackage(temp.path, SOURCE_PARTS, { git: true });
    launcher = join(pkg, LAUNCHER_RELATIVE);
    main = join(pkg, MAIN_RELATIVE);
    fakeBinDir = join(temp.path, 'fake-bin');
    await mkdir(fakeBinDir);
    await writeFile(join(fakeBinDir, 'npm'), FAKE_NPM, { mode: 0o755 });
    npmLog = join(temp.path, 'npm-calls.log');
    fakeNpmEnv = {
      PATH: `${fakeBinDir}:${process.env.PATH ?? ''}`,
      FAKE_NPM_LOG: npmLog,
      FAKE_NPM_NODE_MODULES: join(PACKAGE_ROOT, 'node_modules'),
    };
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await repo?.cleanup();
    await temp?.cleanup();
  });

  it(
    'builds a missing build (npm run build, output on stderr), then the server answers: stdout holds only JSON-RPC',
    async () => {
      expect(existsSync(main)).toBe(false);
      const run = await runLauncher(launcher, ['--standalone'], {
        cwd: repo.root,
        lines: [INITIALIZE],
        closeWhen: (stdout) => stdout.includes('\n'),
        timeoutMs: BUILD_TIMEOUT_MS,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('building (npm run build)');
      expect(run.stderr).toContain(`${main} is missing`);
      expect(run.stderr).toContain('node scripts/build.mjs'); // npm's own lines went to stderr
      expect(existsSync(main)).toBe(true);
      const frames = jsonRpcFrames(run.stdout);
      expect(frames).toHaveLength(1);
      expect(frames[0]?.id).toBe(1);
      expect((frames[0]?.result as { serverInfo?: { name?: string } } | undefined)?.serverInfo?.name).toBe('majordomus');
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    'builds once for two launchers started together on a stale build, and both servers answer',
    async () => {
      const now = new Date();
      await utimes(join(pkg, 'src/platform/log.ts'), now, now);
      const options = { cwd: repo.root, lines: [INITIALIZE], closeWhen: (stdout: string) => stdout.includes('\n'), timeoutMs: BUILD_TIMEOUT_MS };
      const runs = await Promise.all([runLauncher(launcher, ['--standalone'], options), runLauncher(launcher, ['--standalone'], options)]);
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
        expect(jsonRpcFrames(run.stdout).map((frame) => frame.id)).toEqual([1]);
      }
      expect(runs.filter((run) => run.stderr.includes('building (npm run build)'))).toHaveLength(1);
      // The lock the launchers serialise on outlives the build (which never empties dist/): a
      // launcher arriving mid-build waits on it instead of creating a new one and building again.
      expect(existsSync(join(pkg, 'dist/.launcher.lock'))).toBe(true);
    },
    BUILD_TIMEOUT_MS,
  );

  it('runs a current build as it is: no npm, nothing on stdout', async () => {
    const before = await mtime(main);
    const run = await runLauncher(launcher, ['--standalone'], { cwd: repo.root, env: fakeNpmEnv });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).not.toContain('building');
    expect(await npmCalls()).toEqual([]);
    expect(await mtime(main)).toBe(before);
  });

  it.each(['src/platform/log.ts', 'workers/pool-task.ts', 'rolldown.config.mjs', 'scripts/build.mjs', 'package.json', 'package-lock.json'])(
    'runs npm run build when %s is newer than the build, its stdout sent to stderr',
    async (source) => {
      const past = new Date(Date.now() - 2 * 3600_000);
      for (const part of ['src', 'workers', 'rolldown.config.mjs', 'scripts', 'package.json', 'package-lock.json']) await setTreeTime(join(pkg, part), past);
      const built = new Date(Date.now() - 3600_000);
      await utimes(main, built, built);
      const before = await mtime(main);
      await rm(npmLog, { force: true });
      const now = new Date();
      await utimes(join(pkg, source), now, now);

      const run = await runLauncher(launcher, ['--standalone'], { cwd: repo.root, env: fakeNpmEnv });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('building (npm run build)');
      expect(run.stderr).toContain(`${source} is newer than the build`);
      expect(run.stderr).toContain('fake npm run build (stdout)');
      expect(await npmCalls()).toEqual(['run build']);
      expect(await mtime(main)).toBeGreaterThan(before);
    },
  );

  it.each([
    { lock: true, command: 'ci --no-audit --no-fund' },
    { lock: false, command: 'install --no-audit --no-fund' },
  ])('installs a missing node_modules with `npm $command`, its stdout sent to stderr', async ({ lock, command }) => {
    await rm(npmLog, { force: true });
    await rm(join(pkg, 'node_modules'));
    const lockFile = join(pkg, 'package-lock.json');
    const hiddenLock = join(temp.path, 'package-lock.json.hidden');
    if (!lock) await rename(lockFile, hiddenLock);
    try {
      const run = await runLauncher(launcher, ['--standalone'], { cwd: repo.root, env: fakeNpmEnv });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`fake npm ${command} (stdout)`);
      expect(await npmCalls()).toEqual([command]);
    } finally {
      if (!lock) await rename(hiddenLock, lockFile);
      if (!existsSync(join(pkg, 'node_modules'))) await symlink(join(PACKAGE_ROOT, 'node_modules'), join(pkg, 'node_modules'));
    }
  });

  it('finds the package root through a symbolic link to the launcher', async () => {
    await rm(npmLog, { force: true });
    const linkDir = join(temp.path, 'elsewhere', 'bin');
    await mkdir(linkDir, { recursive: true });
    await symlink(launcher, join(linkDir, 'majordomus-mcp'));
    // A relative link to that link: two hops.
    await symlink('bin/majordomus-mcp', join(temp.path, 'elsewhere', 'mm'));
    const run = await runLauncher(join(temp.path, 'elsewhere', 'mm'), ['--standalone'], {
      cwd: repo.root,
      env: fakeNpmEnv,
      lines: [INITIALIZE],
      closeWhen: (stdout) => stdout.includes('\n'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(jsonRpcFrames(run.stdout)[0]?.id).toBe(1);
    expect(await npmCalls()).toEqual([]);
  });

  describe('in a package with neither node_modules nor a build', () => {
    let bare: string;
    let bareTemp: { path: string; cleanup(): Promise<void> };

    beforeAll(async () => {
      bareTemp = await makeTempDir('majordomus-launcher-bare-');
      bare = await copyPackage(bareTemp.path, ['package.json', 'bin', 'src'], { nodeModules: false, git: true });
    });

    afterAll(async () => {
      await bareTemp?.cleanup();
    });

    it('MAJORDOMUS_NO_BUILD: exits 12 naming `npm run build`; nothing installed or built, nothing on stdout', async () => {
      await rm(npmLog, { force: true });
      const run = await runLauncher(join(bare, LAUNCHER_RELATIVE), ['--standalone'], {
        cwd: repo.root,
        env: { ...fakeNpmEnv, MAJORDOMUS_NO_BUILD: '1' },
      });
      expect(run.code, run.stderr).toBe(12);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('majordomus-mcp: MAJ_NO_BUILD: ');
      expect(run.stderr).toContain('`npm run build`');
      expect(run.stderr).toContain(join(bare, MAIN_RELATIVE));
      expect(await npmCalls()).toEqual([]);
      expect(existsSync(join(bare, 'node_modules'))).toBe(false);
      expect(existsSync(join(bare, 'dist'))).toBe(false);
    });

    it.each([
      { lock: true, command: 'ci --no-audit --no-fund', failed: 'npm ci failed' },
      { lock: false, command: 'install --no-audit --no-fund', failed: 'npm install failed' },
    ])('exits 12 with MAJ_NO_BUILD when `npm $command` fails, its stdout on stderr, nothing built', async ({ lock, command, failed }) => {
      await rm(npmLog, { force: true });
      const failingBinDir = join(bareTemp.path, 'failing-bin');
      await mkdir(failingBinDir, { recursive: true });
      await writeFile(join(failingBinDir, 'npm'), FAILING_NPM, { mode: 0o755 });
      const lockFile = join(bare, 'package-lock.json');
      if (lock) await copyFile(join(PACKAGE_ROOT, 'package-lock.json'), lockFile);
      try {
        const run = await runLauncher(join(bare, LAUNCHER_RELATIVE), ['--standalone'], {
          cwd: repo.root,
          env: { PATH: `${failingBinDir}:${process.env.PATH ?? ''}`, FAKE_NPM_LOG: npmLog },
        });
        expect(run.code, run.stderr).toBe(12);
        expect(run.stdout).toBe('');
        expect(run.stderr).toContain(`failing npm ${command} (stdout)`);
        expect(run.stderr).toContain('npm error: failing on purpose');
        expect(run.stderr).toContain(`majordomus-mcp: MAJ_NO_BUILD: ${failed} in ${bare}\n`);
        expect(await npmCalls()).toEqual([command]);
        expect(existsSync(join(bare, MAIN_RELATIVE))).toBe(false);
      } finally {
        await rm(lockFile, { force: true });
        await rm(join(bare, 'dist'), { recursive: true, force: true }); // the launchers' lock file
      }
    });

    it('MAJORDOMUS_BIN: execs it with `mcp` and the arguments; nothing installed or built', async () => {
      await rm(npmLog, { force: true });
      const fakeBin = join(bareTemp.path, 'fake-majordomus');
      await writeFile(fakeBin, FAKE_BIN, { mode: 0o755 });
      const run = await runLauncher(join(bare, LAUNCHER_RELATIVE), ['--http-port', '0', 'two words'], {
        cwd: repo.root,
        env: { ...fakeNpmEnv, MAJORDOMUS_BIN: fakeBin, MAJORDOMUS_NO_BUILD: undefined },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('fake majordomus: mcp --http-port 0 two words\n');
      expect(await npmCalls()).toEqual([]);
      expect(existsSync(join(bare, 'node_modules'))).toBe(false);
      expect(existsSync(join(bare, 'dist'))).toBe(false);
    });
  });
});

describe('bin/majordomus-mcp in a package whose sources do not compile', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let repo: FixtureRepo;
  let pkg: string;

  beforeAll(async () => {
    temp = await makeTempDir('majordomus-launcher-broken-');
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/launch.md': '# Launch\n\nThe launcher builds first.\n' } });
    // The package's own build (package.json's script, rolldown.config.mjs) over stand-in entries
    // instead of the real ones: the stand-in main.ts parses, the file it imports does not.
    pkg = await copyPackage(temp.path, ['package.json', 'package-lock.json', 'rolldown.config.mjs', 'scripts', 'bin'], { git: true });
    await mkdir(join(pkg, 'src/cli'), { recursive: true });
    await mkdir(join(pkg, 'src/platform'), { recursive: true });
    await mkdir(join(pkg, 'workers'));
    await writeFile(join(pkg, 'src/cli/main.ts'), "import { broken } from '../broken.js';\nprocess.stdout.write(`a stand-in ${broken}\\n`);\n");
    await writeFile(join(pkg, 'src/platform/uws.ts'), 'export const uws = 1;\n');
    await writeFile(join(pkg, 'src/broken.ts'), "export const broken: number = ('not closed';\n");
  });

  afterAll(async () => {
    await repo?.cleanup();
    await temp?.cleanup();
  });

  it(
    'exits 12 with MAJ_NO_BUILD when the real `npm run build` fails, the bundler\'s error on stderr, and leaves no build to run',
    async () => {
      const run = await runLauncher(join(pkg, LAUNCHER_RELATIVE), ['--standalone'], {
        cwd: repo.root,
        lines: [INITIALIZE],
        timeoutMs: BUILD_TIMEOUT_MS,
      });
      expect(run.code, run.stderr).toBe(12);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('building (npm run build)');
      expect(run.stderr).toMatch(/PARSE_ERROR[\s\S]*src\/broken\.ts/);
      expect(run.stderr).toContain(`majordomus-mcp: MAJ_NO_BUILD: \`npm run build\` failed in ${pkg}\n`);
      // The build empties dist/ first and writes only when bundling succeeds: a failed build leaves
      // nothing, so the next launch builds again instead of running what a failed build left.
      expect(existsSync(join(pkg, MAIN_RELATIVE))).toBe(false);
    },
    BUILD_TIMEOUT_MS,
  );
});

describe('bin/majordomus-mcp in an installed package', () => {
  let temp: { path: string; cleanup(): Promise<void> };
  let repo: FixtureRepo;
  let fakeBinDir: string;
  let npmLog: string;

  beforeAll(async () => {
    temp = await makeTempDir('majordomus-launcher-installed-');
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/launch.md': '# Launch\n\nThe launcher runs what was installed.\n' } });
    fakeBinDir = join(temp.path, 'fake-bin');
    await mkdir(fakeBinDir);
    await writeFile(join(fakeBinDir, 'npm'), FAKE_NPM, { mode: 0o755 });
    npmLog = join(temp.path, 'npm-calls.log');
  });

  afterAll(async () => {
    await repo?.cleanup();
    await temp?.cleanup();
  });

  /** npm's shape of an installed package: files with a fixed old mtime, directories with the install time. */
  async function npmTimes(path: string, now: Date): Promise<void> {
    const info = await stat(path);
    if (info.isDirectory()) {
      for (const entry of await readdir(path)) await npmTimes(join(path, entry), now);
      await utimes(path, now, now);
    } else {
      const npmEpoch = new Date('1985-10-26T08:15:00Z');
      await utimes(path, npmEpoch, npmEpoch);
    }
  }

  it('runs the build it shipped, even with src/ newer than it: no npm, no build, only the server on stdout', async () => {
    const into = join(temp.path, 'with-src');
    await mkdir(into);
    // Dependencies hoisted beside the package, as a local `npm install majordomus` lays them out.
    await symlink(join(PACKAGE_ROOT, 'node_modules'), join(into, 'node_modules'));
    const installed = await copyPackage(into, ['package.json', 'bin', 'dist', 'page', 'src'], { nodeModules: false });
    await npmTimes(installed, new Date());
    expect(existsSync(join(installed, '.git'))).toBe(false);
    const run = await runLauncher(join(installed, LAUNCHER_RELATIVE), ['--standalone'], {
      cwd: repo.root,
      env: { PATH: `${fakeBinDir}:${process.env.PATH ?? ''}`, FAKE_NPM_LOG: npmLog, FAKE_NPM_NODE_MODULES: join(PACKAGE_ROOT, 'node_modules') },
      lines: [INITIALIZE],
      closeWhen: (stdout) => stdout.includes('\n'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(jsonRpcFrames(run.stdout)[0]?.id).toBe(1);
    expect(run.stderr).not.toContain('building');
    expect(run.stderr).not.toContain('installing');
    expect(await readFile(npmLog, 'utf8').catch(() => '')).toBe('');
    expect(existsSync(join(installed, 'node_modules'))).toBe(false);
  });

  it('without a build: exit 12 with MAJ_NO_BUILD naming the build and why it is no source checkout; nothing installed or built', async () => {
    const into = join(temp.path, 'without-dist');
    await mkdir(into);
    const installed = await copyPackage(into, ['package.json', 'bin', 'page'], { nodeModules: false });
    const run = await runLauncher(join(installed, LAUNCHER_RELATIVE), ['--standalone'], {
      cwd: repo.root,
      env: { PATH: `${fakeBinDir}:${process.env.PATH ?? ''}`, FAKE_NPM_LOG: npmLog },
    });
    expect(run.code, run.stderr).toBe(12);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`majordomus-mcp: MAJ_NO_BUILD: ${join(installed, MAIN_RELATIVE)} is missing, and ${installed} is not a source checkout (no .git, no src/)`);
    expect(run.stderr).toContain('reinstall majordomus');
    expect(await readFile(npmLog, 'utf8').catch(() => '')).toBe('');
    expect(existsSync(join(installed, 'dist'))).toBe(false);
    expect(existsSync(join(installed, 'node_modules'))).toBe(false);
  });
});

describe('client configurations', () => {
  const read = async (path: string): Promise<unknown> => JSON.parse(await readFile(join(PACKAGE_ROOT, path), 'utf8'));
  type Servers = Record<string, Record<string, unknown> | undefined>;

  it('the launcher they name exists and is executable', async () => {
    await access(join(PACKAGE_ROOT, LAUNCHER_RELATIVE), constants.X_OK);
    const text = await readFile(join(PACKAGE_ROOT, LAUNCHER_RELATIVE), 'utf8');
    expect(text.startsWith('#!/usr/bin/env bash\n')).toBe(true);
    expect(text).toContain('set -euo pipefail');
  });

  it('.mcp.json (Claude Code): mcpServers.majordomus, stdio, the launcher', async () => {
    const config = (await read('.mcp.json')) as { mcpServers: Servers };
    const server = config.mcpServers.majordomus;
    expect(server).toMatchObject({ type: 'stdio', command: LAUNCHER_RELATIVE, args: [] });
  });

  it('.gemini/settings.json (Gemini CLI): mcpServers.majordomus, the launcher, a generous timeout', async () => {
    const config = (await read('.gemini/settings.json')) as { mcpServers: Servers };
    const server = config.mcpServers.majordomus;
    expect(server).toMatchObject({ command: LAUNCHER_RELATIVE, args: [] });
    expect(server?.timeout).toBeGreaterThanOrEqual(60_000);
  });

  it('opencode.json (opencode): mcp.majordomus, local, the launcher, enabled', async () => {
    const config = (await read('opencode.json')) as { $schema: string; mcp: Servers };
    expect(config.$schema).toBe('https://opencode.ai/config.json');
    expect(config.mcp.majordomus).toEqual({ type: 'local', command: [LAUNCHER_RELATIVE], enabled: true });
  });

  it('.codex/config.toml (Codex): [mcp_servers.majordomus], the launcher, startup_timeout_sec', async () => {
    // Parsed by a real TOML parser: Python's tomllib (3.11+).
    const { stdout } = await execFileAsync('python3', [
      '-c',
      'import json, sys, tomllib\nwith open(sys.argv[1], "rb") as f:\n    print(json.dumps(tomllib.load(f)))',
      join(PACKAGE_ROOT, '.codex/config.toml'),
    ]);
    const config = JSON.parse(stdout) as { mcp_servers: Servers };
    const server = config.mcp_servers.majordomus;
    expect(server).toMatchObject({ command: LAUNCHER_RELATIVE, args: [] });
    expect(server?.startup_timeout_sec).toBeGreaterThanOrEqual(60);
  });
});
