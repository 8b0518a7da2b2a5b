/**
 * Whether uWebSockets.js's native binary loads on this Node.js, tried in a child process (a native
 * module that fails to load, or crashes, must not take the doctor with it). Information, not a
 * failure: when the binary does not load, the server's HTTP projection runs on a Node.js fallback.
 * Which package provides uWS is the HTTP engine's choice: it is read from package.json's
 * dependencies, so this one function follows a change of it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commandEnvironment } from '../platform/child-env.js';
import { errorMessage } from '../platform/errors.js';
import { PACKAGE_ROOT } from '../platform/package-root.js';
import { finding, type Finding } from './findings.js';

/** A dependency that is uWebSockets.js (`uWebSockets.js`, `@based/uws`, `@trufflesuite/uws-js-unofficial`, …). */
const UWS_NAME = /(^|\/)(uws|uwebsockets)/i;

// Imports the module, then names the native binary it loaded (the process's shared objects).
const PROBE = `const [url, name] = process.argv.slice(1);
await import(url);
const report = process.report.getReport();
const objects = (typeof report === 'string' ? JSON.parse(report) : report).sharedObjects ?? [];
process.stdout.write(JSON.stringify({ binary: objects.find((file) => file.includes(name) && file.endsWith('.node')) ?? null }));`;

async function uwsPackage(): Promise<string | null> {
  const manifest = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return Object.keys(manifest.dependencies ?? {}).find((name) => UWS_NAME.test(name)) ?? null;
}

export async function uwsFinding(): Promise<Finding> {
  const name = await uwsPackage();
  if (name === null) return finding('uws', 'info', 'majordomus depends on no uWebSockets.js package: HTTP is served by the Node.js fallback');
  let url: string;
  try {
    url = import.meta.resolve(name);
  } catch (error) {
    return finding('uws', 'info', `${name} is not installed (${errorMessage(error)}): HTTP is served by the Node.js fallback`);
  }
  const answer = await new Promise<{ stdout: string; stderr: string; error: Error | null }>((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', PROBE, url, name], { env: commandEnvironment(), timeout: 30_000, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, error }),
    );
  });
  let binary: string | null = null;
  try {
    // The last line: a module may print on stdout while it loads.
    binary = (JSON.parse(answer.stdout.trim().split('\n').at(-1) ?? '') as { binary: string | null }).binary;
  } catch {
    binary = null;
  }
  if (binary !== null) return finding('uws', 'ok', `uWebSockets.js loads (${binary}): HTTP is served by uWebSockets.js`);
  const why = (answer.stderr.split('\n').find((line) => line.trim() !== '') ?? answer.error?.message ?? 'no native binary was loaded').trim();
  return finding('uws', 'info', `uWebSockets.js's native binary (${name}) does not load on Node.js ${process.versions.node} (${why}): HTTP is served by the Node.js fallback, slower but the same`);
}
