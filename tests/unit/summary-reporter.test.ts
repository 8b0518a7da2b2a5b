/**
 * The closing line `vitest: N passed, N failed, N skipped` counts every failure vitest knows of.
 * Each case is a real vitest run of one file of the fixture project tests/fixtures/reporter/
 * with our SummaryReporter, in a child process; the test reads the last line and the exit code.
 * - a suite whose `beforeAll` throws is a failure, and its tests that never ran are no skips;
 * - a file whose `afterAll` throws is a failure;
 * - an unhandled rejection is a failure;
 * - a file that fails to import is a failure;
 * - a test whose worker dies under it (still pending at the end) is a failure;
 * - a run that finds no test file is a failure;
 * - a chosen skip is a skip, and such a run passes (the control).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withoutCoverage } from '../helpers/coverage-env.js';
import { withTimeout } from '../helpers/wait.js';
import { summaryLine, type RunCounts } from '../summary-reporter.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE_ROOT = fileURLToPath(new URL('../fixtures/reporter', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

/** Generous: a vitest run starts vite and a worker on a loaded two-core machine. */
const RUN_TIMEOUT_MS = 60_000;

interface RunResult {
  code: number | null;
  stdout: string;
  output: string;
}

/** Runs vitest on the fixture project, restricted to the files matching `filter`. */
async function runFixture(filter: string): Promise<RunResult> {
  // The inner vitest is not ours to measure: no coverage variable.
  const env: NodeJS.ProcessEnv = { ...withoutCoverage(process.env), CI: 'true', NO_COLOR: '1' };
  // The outer vitest's worker variables would make the inner run think it is a worker.
  for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name];
  const child = spawn(process.execPath, [VITEST, 'run', '--root', FIXTURE_ROOT, filter], {
    cwd: PACKAGE_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  try {
    const code = await withTimeout(exited, RUN_TIMEOUT_MS, `vitest run ${filter}`);
    return { code, stdout, output };
  } finally {
    child.kill('SIGKILL');
  }
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

interface Case {
  name: string;
  filter: string;
  counts: RunCounts;
}

const FAILING_RUNS: Case[] = [
  // The hook is the one failure; its two tests never ran and are not skips.
  { name: 'a suite whose beforeAll throws', filter: 'before-all-throws', counts: { passed: 1, failed: 1, skipped: 0 } },
  { name: 'a file whose afterAll throws', filter: 'after-all-throws', counts: { passed: 1, failed: 1, skipped: 0 } },
  { name: 'an unhandled rejection after a passing test', filter: 'unhandled-rejection', counts: { passed: 1, failed: 1, skipped: 0 } },
  { name: 'a file that fails to import', filter: 'import-fails', counts: { passed: 0, failed: 1, skipped: 0 } },
  // The test never finished (pending) and vitest reports the dead worker as an unhandled error.
  { name: 'a test whose worker dies under it', filter: 'worker-dies', counts: { passed: 0, failed: 2, skipped: 0 } },
  { name: 'a run that finds no test file', filter: 'no-file-matches-this', counts: { passed: 0, failed: 1, skipped: 0 } },
];

describe('SummaryReporter', () => {
  it.each(FAILING_RUNS)(
    'counts $name as failed while vitest exits non-zero',
    async ({ filter, counts }) => {
      const run = await runFixture(filter);
      expect(run.code, run.output).not.toBe(0);
      expect(run.code, run.output).not.toBeNull();
      expect(lastLine(run.stdout), run.output).toBe(summaryLine(counts));
    },
    RUN_TIMEOUT_MS + 5_000,
  );

  it(
    'counts a chosen skip as skipped in a run that passes',
    async () => {
      const run = await runFixture('skips');
      expect(run.code, run.output).toBe(0);
      expect(lastLine(run.stdout), run.output).toBe(summaryLine({ passed: 1, failed: 0, skipped: 1 }));
    },
    RUN_TIMEOUT_MS + 5_000,
  );
});
