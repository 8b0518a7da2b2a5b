/** Types of benches/lib/summary.mjs, for the test that keeps docs/PERFORMANCE.md's markers. */
export declare const SUMMARY_BEGIN: string;
export declare const SUMMARY_END: string;
export interface BenchRun {
  name: string;
  seconds: number;
  load: { before: number; after: number };
  failed: boolean;
}
export interface SummaryMeta {
  commit: string;
  dirty: boolean;
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  quick: boolean;
  benches: BenchRun[];
}
export declare function gitState(root: string): { commit: string; dirty: boolean };
export declare function renderSummary(meta: SummaryMeta, rows: ReadonlyArray<readonly [string, string, string | number, string]>): string;
export declare function writeSummary(file: string, block: string): void;
export declare function PERFORMANCE_MD(root: string): string;
