/**
 * The credential seam (src/platform/access.ts): the secret a request presents — its bearer token,
 * else its `x-api-key` — and the constant-time comparison every check uses.
 */
import { describe, expect, it } from 'vitest';
import { bearerMatches, presentedSecret, secretMatches } from '../../../src/platform/access.js';

describe('the secret a request presents', () => {
  it('is the bearer token, else the x-api-key header, else none', () => {
    expect(presentedSecret('Bearer abc', '')).toBe('abc');
    expect(presentedSecret('bearer  abc ', 'xyz')).toBe('abc');
    expect(presentedSecret('', ' xyz ')).toBe('xyz');
    expect(presentedSecret('Basic abc', 'xyz')).toBe('xyz');
    expect(presentedSecret('', '')).toBeNull();
    expect(presentedSecret('Bearer', '  ')).toBeNull();
  });

  it('is compared whole and exactly', () => {
    expect(secretMatches('token', 'token')).toBe(true);
    expect(secretMatches('token', 'token2')).toBe(false);
    expect(secretMatches('tokeN', 'token')).toBe(false);
    expect(secretMatches('', 'token')).toBe(false);
    expect(bearerMatches('Bearer token', 'token')).toBe(true);
    expect(bearerMatches('token', 'token')).toBe(false);
  });
});
