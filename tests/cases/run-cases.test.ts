/**
 * Runs every shell case `tests/cases/*.sh` with bash from the package root, so `npm test` runs
 * them: each must exit 0 and close with its `<name>: N passed, 0 failed` line. A failure shows
 * the case's whole output (its `ok` / `not ok` lines and diagnostics).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CASES_DIR = fileURLToPath(new URL('./', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CASES = readdirSync(CASES_DIR)
  .filter((name) => name.endsWith('.sh'))
  .sort();

/** Generous: a case starts several node processes on a loaded two-core machine, and the
 * real-clients case may first download the four clients on a fresh machine. */
const CASE_TIMEOUT_MS = 420_000;
const KILL_GRACE_MS = 10_000;

interface CaseResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
}

function runCase(path: string): Promise<CaseResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.MAJORDOMUS_LOG;
  delete env.MAJORDOMUS_BIN;
  const child = spawn('bash', [path], { cwd: PACKAGE_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (output += chunk));
  child.stderr.on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    let timedOut = false;
    // SIGTERM first: the case's trap then stops what it started and removes its directory.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
    }, CASE_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, timedOut });
    });
  });
}

describe('shell cases (tests/cases/*.sh)', () => {
  it('there is at least one case', () => {
    expect(CASES.length).toBeGreaterThan(0);
  });

  it.each(CASES)(
    '%s passes',
    async (name) => {
      const result = await runCase(join(CASES_DIR, name));
      const report = `${name} ${result.timedOut ? `timed out after ${CASE_TIMEOUT_MS} ms` : `exited ${result.code ?? result.signal}`}:\n${result.output}`;
      expect(result.timedOut, report).toBe(false);
      expect(result.code, report).toBe(0);
      expect(result.output, report).toMatch(/^[\w.-]+: [1-9]\d* passed, 0 failed$/m);
    },
    CASE_TIMEOUT_MS + KILL_GRACE_MS + 5_000,
  );
});
