/**
 * The error catalogue, its generated page and the OpenAPI error schema stay in step:
 * - every local code has an exit code of the documented set, every wire code an HTTP status;
 * - docs/generated/errors.md lists exactly the catalogue;
 * - the OpenAPI `Error` schema enumerates exactly the wire codes;
 * - every code is produced by a black-box test. This one is a static proxy: it looks for the code
 *   named in an assertion of a suite under tests/blackbox/ or tests/cases/ (`MAJ_LEASE` for a
 *   local code, `'busy'` or `"busy"` for a wire code), outside comments and `.not.` assertions.
 *   Recording the codes the spawned executables really emit would need every test to report its
 *   children's stderr and HTTP bodies somewhere; a black-box suite that names a code is, by the
 *   house rules, one that drives the executable until it answers with that code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT, LOCAL_ERRORS, WIRE_ERRORS } from '../../src/platform/errors.js';

const page = readFileSync(new URL('../../docs/generated/errors.md', import.meta.url), 'utf8');
const openapi = JSON.parse(readFileSync(new URL('../../docs/generated/openapi.json', import.meta.url), 'utf8')) as {
  components: { schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } } };
};

const BLACK_BOX_DIRS = ['../blackbox/', '../cases/'].map((dir) => fileURLToPath(new URL(dir, import.meta.url)));

/** The lines of every black-box suite that could assert a code: no comments, no `.not.` assertions. */
function blackBoxAssertionLines(): string[] {
  const lines: string[] = [];
  for (const dir of BLACK_BOX_DIRS) {
    for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!/\.(ts|sh)$/.test(name)) continue;
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        const text = line.trim();
        if (/^(\/\/|\/\*|\*|#)/.test(text) || text.includes('.not.')) continue;
        lines.push(text);
      }
    }
  }
  return lines;
}

describe('the error catalogue', () => {
  it('gives every local error an exit code of the documented set', () => {
    const exits = new Set<number>(Object.values(EXIT));
    for (const [code, entry] of Object.entries(LOCAL_ERRORS)) {
      expect(code).toMatch(/^MAJ_[A-Z_]+$/);
      expect(exits.has(entry.exit)).toBe(true);
    }
  });

  it('gives every wire error an HTTP error status', () => {
    for (const [code, entry] of Object.entries(WIRE_ERRORS)) {
      expect(code).toMatch(/^[a-z_]+$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
    }
  });

  it('is listed code for code in docs/generated/errors.md', () => {
    const listed = [...page.matchAll(/^\| `([A-Za-z_]+)` \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...Object.keys(LOCAL_ERRORS), ...Object.keys(WIRE_ERRORS)].sort());
  });

  it('is enumerated by the OpenAPI error schema', () => {
    expect(openapi.components.schemas.Error.properties.error.properties.code.enum.sort()).toEqual(Object.keys(WIRE_ERRORS).sort());
  });

  it('is produced by a black-box test, code for code', () => {
    const lines = blackBoxAssertionLines();
    const named = (pattern: RegExp): boolean => lines.some((line) => pattern.test(line));
    const unproduced = [
      ...Object.keys(LOCAL_ERRORS).filter((code) => !named(new RegExp(`\\b${code}\\b`))),
      ...Object.keys(WIRE_ERRORS).filter((code) => !named(new RegExp(`(['"])${code}\\1`))),
    ];
    expect(unproduced, 'codes no black-box test asserts').toEqual([]);
  });
});
