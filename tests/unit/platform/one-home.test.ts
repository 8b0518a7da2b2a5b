/**
 * Each shared decision of the platform floor has one home, kept by a test in the manner of
 * tests/unit/layering.test.ts:
 * - only src/platform/settings.ts reads `process.env` (every other module asks it, or asks
 *   src/platform/child-env.ts what a child inherits);
 * - only src/platform/git.ts runs git;
 * - only src/platform/proc.ts reads /proc;
 * - only src/platform/worker.ts creates a worker thread.
 * Comments are not code: a module may mention what it does not do.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** A module's code without its comments (block comments, and lines that are a `//` comment). */
function code(file: string): string {
  return readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

const everySource = [...sources('src'), ...sources('workers')];

const READS_ENV = /\bprocess\s*(?:\.\s*env\b|\[\s*['"`]env['"`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/;
const RUNS_GIT = /\b(?:spawn|spawnSync|exec|execSync|execFile|execFileSync|fork)\s*\(\s*['"`]git['"`]/;
const READS_PROC = /['"`]\/proc\//;
const CREATES_WORKER = /\bnew\s+Worker\s*\(/;

/** The modules whose code matches `pattern`, outside `homes`. */
function strangers(pattern: RegExp, homes: readonly string[]): string[] {
  return everySource.filter((file) => !homes.includes(file) && pattern.test(code(file)));
}

describe('one home', () => {
  it('reads the environment in src/platform/settings.ts alone', () => {
    expect(strangers(READS_ENV, ['src/platform/settings.ts'])).toEqual([]);
  });

  it('runs git in src/platform/git.ts alone', () => {
    expect(strangers(RUNS_GIT, ['src/platform/git.ts'])).toEqual([]);
  });

  it('reads /proc in src/platform/proc.ts alone', () => {
    expect(strangers(READS_PROC, ['src/platform/proc.ts'])).toEqual([]);
  });

  it('creates worker threads in src/platform/worker.ts alone', () => {
    expect(strangers(CREATES_WORKER, ['src/platform/worker.ts'])).toEqual([]);
  });

  it('recognises each rule broken', () => {
    for (const line of ['const path = process.env.PATH;', "process['env'].PATH", 'const { env } = process;']) expect(READS_ENV.test(line)).toBe(true);
    expect(READS_ENV.test('const env = settings().env;')).toBe(false);
    expect(RUNS_GIT.test("execFile('git', ['status'])")).toBe(true);
    expect(READS_PROC.test('readFileSync(`/proc/${pid}/stat`)')).toBe(true);
    expect(CREATES_WORKER.test("new Worker(new URL('x.js', import.meta.url))")).toBe(true);
  });
});
