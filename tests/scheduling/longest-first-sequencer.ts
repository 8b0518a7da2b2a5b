/**
 * Runs the longest test files first. vitest hands each worker the next file in this order as it
 * becomes free, so starting the long files (a real build, the real agent CLIs, the takeovers) at
 * once keeps them from being what the run still waits on when every other file is done.
 *
 * A file's duration is the one vitest recorded in its results cache in the last run that ran it
 * (node_modules/.vite/vitest/…/results.json, written after every run), else the one committed in
 * durations.json (what a fresh clone has: `node scripts/record-test-durations.mjs` refreshes it from
 * a run's cache), else unknown: a file no run has timed yet (a new one) goes first, since a short
 * file costs little there and a long one would cost most last.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** File (relative to the root, `/` separators) → seconds, as measured when it was committed. */
const COMMITTED: Readonly<Record<string, number>> = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as Record<string, number>;

export class LongestFirstSequencer extends BaseSequencer {
  /** The file's last known duration in ms, or Infinity when no run has timed it. */
  #duration(spec: TestSpecification): number {
    const file = relative(this.ctx.config.root, spec.moduleId).split('\\').join('/');
    const recorded = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
    if (recorded !== undefined && recorded > 0) return recorded;
    const committed = COMMITTED[file];
    return committed === undefined ? Number.POSITIVE_INFINITY : committed * 1000;
  }

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = new Map(files.map((spec) => [spec, this.#duration(spec)]));
    // Equal estimates (unknown files) keep a stable order: by path.
    return [...files].sort((a, b) => (durations.get(b) as number) - (durations.get(a) as number) || a.moduleId.localeCompare(b.moduleId));
  }
}
