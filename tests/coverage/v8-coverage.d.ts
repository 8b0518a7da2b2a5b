/** Types for the part of @bcoe/v8-coverage (no types of its own) that spawned-coverage.ts uses. */
declare module '@bcoe/v8-coverage' {
  import type { Profiler } from 'node:inspector';

  /** What Node writes to a NODE_V8_COVERAGE folder for one process. */
  export interface ProcessCov {
    result: Profiler.ScriptCoverage[];
  }

  /** Sums the counts of several processes' coverage, script by script (by URL). */
  export function mergeProcessCovs(processCovs: readonly ProcessCov[]): ProcessCov;
}
