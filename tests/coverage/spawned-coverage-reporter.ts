/**
 * Makes `vitest run --coverage` measure the spawned executable too, not only the code the tests
 * import: most tests are black-box and run `node dist/src/cli/main.js …` (with its HTTP thread and
 * pool threads), which vitest's v8 provider cannot see.
 *
 * - At start, NODE_V8_COVERAGE names a fresh folder (coverage/.spawned): every process the test
 *   workers start inherits it, and Node writes each one's coverage there when it exits.
 * - When vitest has its in-process coverage, and before it reports it, the spawned processes'
 *   counts are added onto it (add-hits.ts), so one report covers both; a table by folder is
 *   printed, above the closing line.
 * - The floors are checked here, not by vitest (whose check prints after the closing line): a
 *   metric under its floor is named, fails the run (exit 1) and is counted as a failure by the
 *   closing line (`floorMisses`).
 * Without --coverage it does nothing.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, Vitest } from 'vitest/node';
import { addHits } from './add-hits.js';
import { folderTable, totals } from './folder-table.js';
import type { CoverageMapLike, Metric } from './istanbul.js';
import { readSpawnedCoverage } from './spawned-coverage.js';

export class SpawnedCoverageReporter implements Reporter {
  #vitest: Vitest | undefined;
  #dir: string | undefined;
  readonly #floors: Readonly<Record<Metric, number>>;
  #floorMisses = 0;

  /** `floors`: the least % of each metric the whole run must cover. */
  constructor(floors: Readonly<Record<Metric, number>>) {
    this.#floors = floors;
  }

  /** How many metrics ended under their floor (0 without --coverage). */
  get floorMisses(): number {
    return this.#floorMisses;
  }

  onInit(vitest: Vitest): void {
    if (!vitest.config.coverage.enabled) return;
    this.#vitest = vitest;
    this.#dir = join(vitest.config.root, 'coverage', '.spawned');
    rmSync(this.#dir, { recursive: true, force: true });
    mkdirSync(this.#dir, { recursive: true });
    process.env.NODE_V8_COVERAGE = this.#dir;
  }

  async onCoverage(coverage: unknown): Promise<void> {
    const vitest = this.#vitest;
    const dir = this.#dir;
    if (vitest === undefined || dir === undefined) return;
    const map = coverage as CoverageMapLike;
    const root = vitest.config.root;
    const started = performance.now();
    const spawned = await readSpawnedCoverage(dir, root);
    const inProcess = new Set(map.files());
    let unpaired = 0;
    for (const [file, data] of spawned.files) {
      if (inProcess.has(file)) unpaired += addHits(map.fileCoverageFor(file).data, data);
      else map.addFileCoverage(data);
    }
    rmSync(dir, { recursive: true, force: true });

    const lines = [
      '',
      `Coverage of src/ and workers/ (%), in-process tests plus ${spawned.processes} spawned processes` +
        ` (added in ${((performance.now() - started) / 1000).toFixed(1)} s):`,
      ...folderTable(map, root),
    ];
    if (unpaired > 0) lines.push(`(${unpaired} spawned-process items matched no in-process item and are not counted)`);
    if (spawned.unfinished > 0) lines.push(`(${spawned.unfinished} coverage files were still being written by processes running past the end and are not counted)`);
    const measured = totals(map);
    const misses = (Object.keys(this.#floors) as Metric[]).filter((metric) => measured[metric] < this.#floors[metric]);
    this.#floorMisses = misses.length;
    lines.push(
      misses.length === 0
        ? `coverage floors held (${(Object.keys(this.#floors) as Metric[]).map((m) => `${m} ${measured[m]} % ≥ ${this.#floors[m]}`).join(', ')})`
        : `coverage under its floor: ${misses.map((m) => `${m} ${measured[m]} % < ${this.#floors[m]} %`).join(', ')}`,
    );
    if (misses.length > 0) process.exitCode = 1;
    vitest.logger.log(lines.join('\n'));
  }
}
