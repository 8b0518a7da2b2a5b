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

/**
 * Whether `version` satisfies the package's own `engines.node`: alternatives joined by `||`, each
 * `^X.Y.Z` (that major, at least that version) or `>=X.Y.Z`. Undefined for any other form (we write
 * the range ourselves, so only these appear; another is reported, not guessed at).
 */
export function satisfies(version: string, range: string): boolean | undefined {
  const alternatives = range.split('||').map((part) => part.trim());
  let answer = false;
  for (const alternative of alternatives) {
    const match = /^(\^|>=)\s*(\d+(?:\.\d+){0,2})$/.exec(alternative);
    if (!match) return undefined;
    const [, operator, floor = ''] = match;
    const sameMajor = parts(version)[0] === parts(floor)[0];
    if (atLeast(version, floor) && (operator === '>=' || sameMajor)) answer = true;
  }
  return answer;
}

export async function nodeFinding(version = process.versions.node): Promise<Finding> {
  const manifest = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  const range = manifest.engines?.node ?? '';
  const verdict = range === '' ? undefined : satisfies(version, range);
  if (verdict === undefined) return finding('node', 'info', `Node.js ${version} (majordomus declares ${range === '' ? 'no engine range' : `"${range}"`})`);
  if (verdict) return finding('node', 'ok', `Node.js ${version} (majordomus runs on ${range})`);
  return finding('node', 'fail', `Node.js ${version} is not one majordomus runs on (${range}): the server may not start`, `install a Node.js version in ${range} and put it first on PATH`);
}
