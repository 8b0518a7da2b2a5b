import { defineConfig } from 'vitest/config';
import { SpawnedCoverageReporter } from './tests/coverage/spawned-coverage-reporter.js';
import { LongestFirstSequencer } from './tests/scheduling/longest-first-sequencer.js';
import { SummaryReporter } from './tests/summary-reporter.js';

/**
 * Floors for in-process and spawned coverage together, a little under what is measured
 * (docs/COVERAGE.md). Checked by SpawnedCoverageReporter, so a miss is counted by the closing line.
 */
const coverage = new SpawnedCoverageReporter({ lines: 92, branches: 79, functions: 91, statements: 89 });

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // SpawnedCoverageReporter adds the spawned executable's coverage under --coverage (docs/COVERAGE.md).
    reporters: ['default', coverage, new SummaryReporter(() => coverage.floorMisses)],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Most files spend their time waiting on the servers and agents they start, not on the CPU:
    // twice as many workers as the two cores keep them busy (docs/COVERAGE.md, "How long it takes").
    maxWorkers: 4,
    fileParallelism: true,
    // The longest files first, by the durations of the last run (tests/scheduling/).
    sequence: { sequencer: LongestFirstSequencer },
    // Each worker process runs file after file instead of a fresh process (and a fresh vitest and
    // coverage set-up) per file: that cost about 0.5–1 s of CPU per file, half the unit tests'
    // time. Every file cleans up what it starts; module-level state the tests reach (caches such
    // as settings(), probeMasking()) is the same for every file of a process. A test that changes
    // process-wide state (process.env, spies) restores it, as before.
    isolate: false,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts', 'workers/**/*.ts'],
      exclude: ['**/*.d.ts'],
      // Files only: the summary table comes from SpawnedCoverageReporter, before the closing line.
      reporter: ['json-summary'],
    },
  },
});
