/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that any CI can read
 * whatever it knows about vitest's own output.
 */
import type { Reporter, TestModule } from 'vitest/node';

export class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed' || state === 'skipped') counts[state] += 1;
      }
      if (module.state() === 'failed' && module.children.size === 0) counts.failed += 1; // a file that failed to load
    }
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
