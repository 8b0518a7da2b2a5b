/** Whether this Node.js is one majordomus runs on: the `engines.node` floor of its package.json (`>=X.Y[.Z]`). */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../platform/package-root.js';
import { finding, type Finding } from './findings.js';

function parts(version: string): number[] {
  return version.split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/** Whether `version` (`20.19.0`) is at least `floor` (`20.11`). */
export function atLeast(version: string, floor: string): boolean {
  const have = parts(version);
  const need = parts(floor);
  for (let index = 0; index < Math.max(have.length, need.length); index += 1) {
    const a = have[index] ?? 0;
    const b = need[index] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

export async function nodeFinding(version = process.versions.node): Promise<Finding> {
  const manifest = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  const range = manifest.engines?.node ?? '';
  const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim())?.[1];
  if (floor === undefined) return finding('node', 'info', `Node.js ${version} (majordomus declares ${range === '' ? 'no engine range' : `"${range}"`})`);
  if (atLeast(version, floor)) return finding('node', 'ok', `Node.js ${version} (majordomus needs ${range})`);
  return finding('node', 'fail', `Node.js ${version} is older than majordomus needs (${range}): the server may not start`, `install Node.js ${floor} or later and put it first on PATH`);
}
