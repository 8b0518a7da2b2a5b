/**
 * folderTable sums coverage by source folder:
 * - src/cli/commands is folded into src/cli, top-level src files are their own row, workers one row;
 * - each metric is covered/total of the files summed (not an average of percentages);
 * - a folder with nothing to measure shows 100.00; the last row totals every file.
 */
import { describe, expect, it } from 'vitest';
import { folderTable } from '../../coverage/folder-table.js';
import type { CoverageMapLike, FileCoverageData, Metric, Totals } from '../../coverage/istanbul.js';

type Counts = Record<Metric, [covered: number, total: number]>;

function mapOf(root: string, files: Record<string, Counts>): CoverageMapLike {
  return {
    files: () => Object.keys(files).map((file) => `${root}/${file}`),
    fileCoverageFor: (path) => ({
      data: {} as FileCoverageData,
      toSummary: () => ({
        toJSON: () => {
          const counts = files[path.slice(root.length + 1)] as Counts;
          const totals = {} as Record<Metric, Totals>;
          for (const [metric, [covered, total]] of Object.entries(counts)) totals[metric as Metric] = { covered, total, pct: 0 };
          return totals;
        },
      }),
    }),
    addFileCoverage: () => undefined,
  };
}

describe('folderTable', () => {
  it('sums covered and total by folder and over all files', () => {
    const map = mapOf('/p', {
      'src/cli/main.ts': { lines: [1, 4], branches: [0, 0], functions: [1, 1], statements: [1, 4] },
      'src/cli/commands/inspect.ts': { lines: [3, 4], branches: [1, 4], functions: [0, 1], statements: [3, 6] },
      'src/errors.ts': { lines: [2, 2], branches: [1, 2], functions: [1, 1], statements: [2, 2] },
      'workers/pool.ts': { lines: [0, 10], branches: [0, 2], functions: [0, 3], statements: [0, 10] },
    });

    expect(folderTable(map, '/p')).toEqual([
      'folder                lines   branches  functions statements',
      'src                  100.00      50.00     100.00     100.00',
      'src/cli               50.00      25.00      50.00      40.00',
      'workers                0.00       0.00       0.00       0.00',
      'all files             30.00      25.00      33.33      27.27',
    ]);
  });
});
