/**
 * The error catalogue, its generated page and the OpenAPI error schema stay in step:
 * - every local code has an exit code of the documented set, every wire code an HTTP status;
 * - docs/generated/errors.md lists exactly the catalogue;
 * - the OpenAPI `Error` schema enumerates exactly the wire codes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT, LOCAL_ERRORS, WIRE_ERRORS } from '../../src/errors.js';

const page = readFileSync(new URL('../../docs/generated/errors.md', import.meta.url), 'utf8');
const openapi = JSON.parse(readFileSync(new URL('../../docs/generated/openapi.json', import.meta.url), 'utf8')) as {
  components: { schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } } };
};

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
});
