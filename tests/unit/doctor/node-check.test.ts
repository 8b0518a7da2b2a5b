/** doctor's Node.js check against the package's own engines range: `^` and `>=` alternatives joined by `||`. */
import { describe, expect, it } from 'vitest';
import { satisfies } from '../../../src/doctor/node-check.js';

describe('satisfies', () => {
  const range = '^20.11.0 || ^22.0.0 || ^24.0.0';
  it.each([
    ['20.11.0', true],
    ['20.20.2', true],
    ['22.23.5', true],
    ['24.22.3', true],
    ['20.10.9', false],
    ['21.7.0', false],
    ['18.20.0', false],
    ['25.0.0', false],
  ])('Node.js %s in "^20.11.0 || ^22.0.0 || ^24.0.0": %s', (version, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });

  it('reads >= floors, and answers undefined for a form it does not know', () => {
    expect(satisfies('25.1.0', '>=20.11')).toBe(true);
    expect(satisfies('18.0.0', '>=20.11')).toBe(false);
    expect(satisfies('22.0.0', '20.x')).toBeUndefined();
  });
});
