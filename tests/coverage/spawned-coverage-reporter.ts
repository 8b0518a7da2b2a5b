/**
 * Makes `vitest run --coverage` measure the spawned executable too, not only the code the tests
 * import: most tests are black-box and run `node dist/src/cli/main.js …` (with its HTTP thread and
 * pool threads), which vitest's v8 provider cannot see.
 *
 * - At start, NODE_V8_COVERAGE names a fresh folder (coverage/.spawned): every process the test
 *   workers start inherits it, and Node writes each one's coverage there when it exits.
 * - When vitest has its in-process coverage, and before it reports it or checks the floors of
 *   vitest.config.ts, the spawned processes' counts are added onto it (add-hits.ts), so one report
 *   and one set of floors cover both; a table by folder is printed, above vitest's closing lines.
 * Without --coverage it does nothing.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, Vitest } from 'vitest/node';
import { addHits } from './add-hits.js';
import { folderTable } from './folder-table.js';
import type { CoverageMapLike } from './istanbul.js';
import { readSpawnedCoverage } from './spawned-coverage.js';

export class SpawnedCoverageReporter implements Reporter {
  #vitest: Vitest | undefined;
  #dir: string | undefined;

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
    const measured = new Set(map.files());
    let unpaired = 0;
    for (const [file, data] of spawned.files) {
      if (measured.has(file)) unpaired += addHits(map.fileCoverageFor(file).data, data);
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
    vitest.logger.log(lines.join('\n'));
  }
}
