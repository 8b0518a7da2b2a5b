/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that any CI can read
 * whatever it knows about vitest's own output.
 *
 * "failed" counts every failure vitest knows of, not only failed tests, so the line never reads
 * `0 failed` for a run vitest ends as failed:
 * - a failed test, and a test still pending when the run ended (it never finished);
 * - an error of a suite or a file outside its tests: a `beforeAll` or `afterAll` that threw, a
 *   file that failed to import or to collect, a suite without tests;
 * - a file that never ran (still queued or pending, without tests);
 * - an unhandled error (a rejection or exception outside any test);
 * - a run vitest ends as failed or interrupted with none of the above counted (no test file
 *   found, an interrupt between tests): one failure for the run itself.
 *
 * A test that did not run because a suite or file above it failed (vitest marks it skipped) is
 * not a skip: nobody chose to skip it. It is counted nowhere; the failure that stopped it is.
 */
import type { SerializedError } from 'vitest';
import type { Reporter, TestCase, TestModule, TestRunEndReason, TestSuite } from 'vitest/node';

export interface RunCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/** The last line of a run; `tests/unit/summary-reporter.test.ts` reads it back. */
export function summaryLine(counts: RunCounts): string {
  return `vitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`;
}

/** True when a suite or file above `test` failed on its own (a hook, an import, a collection). */
function stoppedByFailedParent(test: TestCase): boolean {
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) return true;
    if (parent.type === 'module') return false;
  }
}

/** Counts one finished (or interrupted) run; exported so the counting is testable apart. */
export function countRun(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
  reason: TestRunEndReason,
): RunCounts {
  const counts: RunCounts = { passed: 0, failed: 0, skipped: 0 };
  for (const module of testModules) {
    // A file's own errors: failed import or collection, a file-level hook, an error between tests.
    counts.failed += module.errors().length;
    const state = module.state();
    if ((state === 'queued' || state === 'pending') && module.children.size === 0) counts.failed += 1;
    for (const suite of module.children.allSuites()) counts.failed += suite.errors().length;
    for (const test of module.children.allTests()) {
      const testState = test.result().state;
      if (testState === 'passed') counts.passed += 1;
      else if (testState === 'failed' || testState === 'pending') counts.failed += 1;
      else if (!stoppedByFailedParent(test)) counts.skipped += 1;
    }
  }
  counts.failed += unhandledErrors.length;
  if (reason !== 'passed' && counts.failed === 0) counts.failed = 1;
  return counts;
}

export class SummaryReporter implements Reporter {
  readonly #otherFailures: () => number;

  /** `otherFailures`: failures no test result shows (a coverage floor missed), counted too. */
  constructor(otherFailures: () => number = () => 0) {
    this.#otherFailures = otherFailures;
  }

  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    const counts = countRun(testModules, unhandledErrors, reason);
    counts.failed += this.#otherFailures();
    process.stdout.write(`\n${summaryLine(counts)}\n`);
  }
}
