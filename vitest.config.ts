import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './tests/summary-reporter.js';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    reporters: ['default', new SummaryReporter()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Black-box tests spawn real servers; two cores are shared, so keep parallelism modest.
    maxWorkers: 2,
    fileParallelism: true,
    coverage: { provider: 'v8', include: ['src/**/*.ts', 'workers/**/*.ts'], reporter: ['text-summary', 'html'] },
  },
});
