/**
 * majordomus as a user gets it: `npm pack` (its `prepack` builds) in a throwaway copy of the
 * sources, then `npm install -g` of that tarball into an empty prefix (NPM_CONFIG_PREFIX), its
 * dependencies from npm's cache or registry. The copy keeps the real checkout's dist/ untouched.
 * Every npm variable of ours (`npm test` sets many) is left out, so the global install goes where
 * it is told and nowhere else.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withoutCoverage } from './coverage-env.js';
import { copyPackage, SOURCE_PARTS } from './package-copy.js';
import { PACKAGE_ROOT } from './cli.js';

const execFileAsync = promisify(execFile);

/** Packing builds the whole package (prepack) on a shared two-core machine; installing may download. */
export const INSTALL_PACKAGE_TIMEOUT_MS = 300_000;

export interface InstalledPackage {
  /** The packed tarball. */
  tarball: string;
  /** The global prefix it was installed into. */
  prefix: string;
  /** `<prefix>/bin`, holding `majordomus` and `majordomus-mcp`: put it first on PATH. */
  bin: string;
  /** The installed package's root (`<prefix>/lib/node_modules/majordomus`). */
  root: string;
  /** Every path in the tarball, below its `package/` folder. */
  files: string[];
  /** How long packing and installing took, in ms. */
  packMs: number;
  installMs: number;
}

/** Our environment without npm's lifecycle variables (nor coverage: npm and the bundler are not ours), plus `extra`. */
function npmEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(withoutCoverage(process.env))) if (!/^npm_/i.test(name)) env[name] = value;
  return { ...env, ...extra };
}

async function npm(args: readonly string[], cwd: string, extra: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync('npm', [...args], { cwd, env: npmEnv(extra), encoding: 'utf8', timeout: INSTALL_PACKAGE_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${failure.message}\nstdout:\n${failure.stdout ?? ''}\nstderr:\n${failure.stderr ?? ''}`);
  }
}

/** Packs a copy of this checkout in `into` and installs the tarball globally into `<into>/prefix`. */
export async function packAndInstall(into: string): Promise<InstalledPackage> {
  const sources = join(into, 'sources');
  await mkdir(sources);
  // The sources and what the files list ships besides them; node_modules linked for the compiler.
  const pkg = await copyPackage(sources, SOURCE_PARTS);
  for (const part of ['README.md', 'LICENSE', 'docs']) await cp(join(PACKAGE_ROOT, part), join(pkg, part), { recursive: true });
  const packed = join(into, 'packed');
  await mkdir(packed);
  let started = Date.now();
  await npm(['pack', '--pack-destination', packed, '--prefer-offline'], pkg);
  const packMs = Date.now() - started;
  const [name] = (await readdir(packed)).filter((file) => file.endsWith('.tgz'));
  if (name === undefined) throw new Error(`npm pack left no tarball in ${packed}`);
  const tarball = join(packed, name);
  const { stdout: listing } = await execFileAsync('tar', ['-tzf', tarball], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  const files = listing.split('\n').filter(Boolean).map((path) => path.replace(/^package\//, ''));

  const prefix = join(into, 'prefix');
  await mkdir(prefix);
  started = Date.now();
  await npm(['install', '--global', tarball, '--prefer-offline', '--no-audit', '--no-fund'], into, { NPM_CONFIG_PREFIX: prefix });
  const installMs = Date.now() - started;
  return { tarball, prefix, bin: join(prefix, 'bin'), root: join(prefix, 'lib', 'node_modules', 'majordomus'), files, packMs, installMs };
}
