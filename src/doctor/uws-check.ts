/**
 * Whether uWebSockets.js's native binary loads on this Node.js, tried in a child process (a native
 * module that fails to load, or crashes, must not take the doctor with it). Information, not a
 * failure: when the binary does not load, the server's HTTP projection runs on a Node.js fallback.
 * Kept to this one function and its constant: which package provides uWS is the HTTP engine's
 * choice (package.json's dependencies); change UWS_PACKAGE with it.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { commandEnvironment } from '../platform/child-env.js';
import { errorMessage } from '../platform/errors.js';
import { PACKAGE_ROOT } from '../platform/package-root.js';
import { finding, type Finding } from './findings.js';

export const UWS_PACKAGE = '@trufflesuite/uws-js-unofficial';

// Loads the module and says which native binary (a `.node` file in require's cache) it loaded.
const PROBE = `const loaded = require(process.argv[1]);
const binary = Object.keys(require.cache).find((file) => file.endsWith('.node'));
process.stdout.write(JSON.stringify({ binary: binary ?? null, app: typeof loaded.App === 'function' }));`;

export async function uwsFinding(): Promise<Finding> {
  let main: string;
  try {
    main = createRequire(join(PACKAGE_ROOT, 'package.json')).resolve(UWS_PACKAGE);
  } catch (error) {
    return finding('uws', 'info', `${UWS_PACKAGE} is not installed (${errorMessage(error)}): HTTP is served by the Node.js fallback`);
  }
  const answer = await new Promise<{ stdout: string; stderr: string; error: Error | null }>((resolve) => {
    execFile(process.execPath, ['-e', PROBE, main], { env: commandEnvironment(), timeout: 30_000, encoding: 'utf8' }, (error, stdout, stderr) => resolve({ stdout, stderr, error }));
  });
  let loaded: { binary: string | null; app: boolean } | null = null;
  try {
    loaded = JSON.parse(answer.stdout) as { binary: string | null; app: boolean };
  } catch {
    loaded = null;
  }
  if (loaded?.binary) return finding('uws', 'ok', `uWebSockets.js loads (${loaded.binary}): HTTP is served by uWebSockets.js`);
  const why = (answer.stderr.split('\n').find((line) => line.trim() !== '') ?? answer.error?.message ?? 'no native binary was loaded').trim();
  return finding('uws', 'info', `uWebSockets.js's native binary does not load on Node.js ${process.versions.node} (${why}): HTTP is served by the Node.js fallback, slower but the same`);
}
