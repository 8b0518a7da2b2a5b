/** Coverage summed by source folder (src/cli, src/http, …, workers), as lines of a plain table. */
import { dirname, relative } from 'node:path';
import type { CoverageMapLike, Metric } from './istanbul.js';

const METRICS: readonly Metric[] = ['lines', 'branches', 'functions', 'statements'];

type Sums = Record<Metric, { total: number; covered: number }>;

const emptySums = (): Sums => ({
  lines: { total: 0, covered: 0 },
  branches: { total: 0, covered: 0 },
  functions: { total: 0, covered: 0 },
  statements: { total: 0, covered: 0 },
});

const percent = (covered: number, total: number): string => (total === 0 ? '100.00' : ((100 * covered) / total).toFixed(2));

/** The folder a file is reported under: its directory, with src/cli/commands folded into src/cli. */
function folderOf(root: string, file: string): string {
  const parts = dirname(relative(root, file)).split('/');
  return parts.slice(0, parts[0] === 'src' ? 2 : 1).join('/');
}

/** The percentage covered of each metric over every file. */
export function totals(map: CoverageMapLike): Record<Metric, number> {
  const all = emptySums();
  for (const file of map.files()) {
    const summary = map.fileCoverageFor(file).toSummary().toJSON();
    for (const metric of METRICS) {
      all[metric].total += summary[metric].total;
      all[metric].covered += summary[metric].covered;
    }
  }
  return Object.fromEntries(METRICS.map((m) => [m, Number(percent(all[m].covered, all[m].total))])) as Record<Metric, number>;
}

/** One row per folder and a total row: % lines, branches, functions and statements covered. */
export function folderTable(map: CoverageMapLike, root: string): string[] {
  const folders = new Map<string, Sums>();
  const all = emptySums();
  for (const file of map.files()) {
    const folder = folderOf(root, file);
    const sums = folders.get(folder) ?? emptySums();
    folders.set(folder, sums);
    const summary = map.fileCoverageFor(file).toSummary().toJSON();
    for (const metric of METRICS) {
      for (const into of [sums[metric], all[metric]]) {
        into.total += summary[metric].total;
        into.covered += summary[metric].covered;
      }
    }
  }
  const row = (name: string, sums: Sums): string =>
    [name.padEnd(16), ...METRICS.map((m) => percent(sums[m].covered, sums[m].total).padStart(11))].join('');
  return [
    ['folder'.padEnd(16), ...METRICS.map((m) => m.padStart(11))].join(''),
    ...[...folders.keys()].sort().map((folder) => row(folder, folders.get(folder) as Sums)),
    row('all files', all),
  ];
}
