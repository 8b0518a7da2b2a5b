/**
 * `npm ci` refuses a lock that omits an optional dependency, even one for another platform. The
 * registry we build against serves only the linux-x64 build of rust-just, so npm leaves the other
 * platforms out when it writes the lock; their entries (os/cpu-filtered, never installed here)
 * are kept in package-lock.json by hand. This test fails when an `npm install` drops them again.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

describe('package-lock.json', () => {
  it('has an entry for every optional dependency, so npm ci accepts it on a fresh machine', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        const nested = `${path === '' ? '' : `${path}/`}node_modules/${name}`;
        if (!(nested in lock.packages) && !(`node_modules/${name}` in lock.packages)) missing.push(`${name} (of ${path || 'the root'})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
