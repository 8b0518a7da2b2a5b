/**
 * The parts of Istanbul's coverage data this folder reads and writes: vitest hands its coverage map
 * to reporters as `unknown`, and istanbul-lib-coverage ships no types.
 */

export interface Position {
  line: number;
  /** null where a source map gives no column (vitest's in-process maps end statements so). */
  column: number | null;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface FunctionMapping {
  name: string;
  decl: Range;
  loc: Range;
  line: number;
}

export interface BranchMapping {
  loc: Range;
  type: string;
  locations: Range[];
  line: number;
}

/** One file's coverage: where each statement, function and branch is, and how often it ran. */
export interface FileCoverageData {
  path: string;
  statementMap: Record<string, Range>;
  fnMap: Record<string, FunctionMapping>;
  branchMap: Record<string, BranchMapping>;
  s: Record<string, number>;
  f: Record<string, number>;
  b: Record<string, number[]>;
}

export interface Totals {
  total: number;
  covered: number;
  pct: number | string;
}

export type Metric = 'lines' | 'statements' | 'functions' | 'branches';

/** istanbul-lib-coverage's CoverageMap, as far as this folder uses it. */
export interface CoverageMapLike {
  files(): string[];
  fileCoverageFor(file: string): { data: FileCoverageData; toSummary(): { toJSON(): Record<Metric, Totals> } };
  addFileCoverage(data: FileCoverageData): void;
}
