/**
 * The tests' own way of starting a process that is not ours without coverage
 * (tests/helpers/coverage-env.ts). Covers:
 * - a node child started with `withoutCoverage(env)` has no NODE_V8_COVERAGE, though node hands its
 *   own to a child whose environment merely lacks the name (which a child started with `env` as
 *   it is, or with a fresh object, gets);
 * - the rest of `env` is kept.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutCoverage } from '../../helpers/coverage-env.js';

describe('withoutCoverage', () => {
  it('starts a node child without NODE_V8_COVERAGE, which a fresh environment would not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'majordomus-coverage-env-'));
    const before = process.env.NODE_V8_COVERAGE;
    process.env.NODE_V8_COVERAGE = dir;
    const seen = (env: NodeJS.ProcessEnv): string =>
      execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.NODE_V8_COVERAGE))'], { env, encoding: 'utf8' });
    try {
      expect(seen({ PATH: process.env.PATH })).toBe(dir);
      expect(seen(withoutCoverage())).toBe('undefined');
      expect(seen(withoutCoverage({ PATH: process.env.PATH }))).toBe('undefined');
    } finally {
      if (before === undefined) delete process.env.NODE_V8_COVERAGE;
      else process.env.NODE_V8_COVERAGE = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps everything else', () => {
    expect(withoutCoverage({ PATH: '/bin', HOME: '/h', NODE_V8_COVERAGE: '/c' })).toStrictEqual({ PATH: '/bin', HOME: '/h', NODE_V8_COVERAGE: undefined });
  });
});
