/**
 * The layout of the build (`npm run build`, run before the tests) that the sources count on:
 * - every script that resolves a path relative to itself (`new URL('../…', import.meta.url)`: the
 *   workers' entries, the package root, doctor's uWS check) sits two folders under dist/, as the
 *   module it came from did — a bundler that put one in a worker entry (one folder deep) would
 *   send it to the wrong folder;
 * - each such path names a file the build wrote (or the package root);
 * - the bundled packages' licences are in dist/THIRD-PARTY-NOTICES.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'dist');
const RELATIVE_URL = /new URL\(["'](\.\.\/[^"']*)["'],\s*import\.meta\.url\)/g;

function scripts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? scripts(path) : name.endsWith('.js') ? [path] : [];
  });
}

describe('the build', () => {
  const built = existsSync(join(DIST, 'src/cli/main.js')) ? scripts(DIST) : [];

  it('exists (npm test builds before it tests)', () => {
    expect(built.length).toBeGreaterThan(0);
  });

  it('puts every script that resolves a path relative to itself two folders under dist/, and the path exists', () => {
    const found: string[] = [];
    for (const script of built) {
      for (const [, target] of readFileSync(script, 'utf8').matchAll(RELATIVE_URL)) {
        const where = relative(DIST, script);
        found.push(`${where} → ${target}`);
        expect(where.split('/'), `${where} resolves ${target} relative to itself`).toHaveLength(3);
        const path = resolve(join(script, '..'), target as string);
        // `../../` from dist/src/… is dist/ itself, whose parent is the package root.
        expect(existsSync(path), `${where}: ${target} names ${path}`).toBe(true);
      }
    }
    expect(found.length, 'the workers, the package root and doctor resolve paths this way').toBeGreaterThanOrEqual(5);
  });

  it('ships the licences of the packages it bundles', () => {
    const notices = readFileSync(join(DIST, 'THIRD-PARTY-NOTICES.md'), 'utf8');
    for (const name of ['zod', 'yaml', '@modelcontextprotocol/sdk']) expect(notices).toMatch(new RegExp(`^## ${name.replace('/', '\\/')} \\d`, 'm'));
    expect(notices).toContain('Permission is hereby granted');
  });
});
