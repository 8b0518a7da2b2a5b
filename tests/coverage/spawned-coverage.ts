/**
 * Reads the coverage that the spawned executable's processes left in a NODE_V8_COVERAGE folder and
 * maps it back to src/*.ts and workers/*.ts.
 *
 * Node writes one JSON file per process at its exit, with every thread's scripts (the HTTP thread
 * and the pool threads included); a process killed with SIGKILL writes none. Only the package's
 * own compiled scripts (dist/src, dist/workers) are kept; the processes' counts are summed with
 * the merge vitest's v8 provider uses, then converted once per script with the converter it uses
 * (ast-v8-to-istanbul), through tsc's source maps.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mergeProcessCovs, type ProcessCov } from '@bcoe/v8-coverage';
import { convert } from 'ast-v8-to-istanbul';
import { parseAstAsync } from 'vitest/node';
import type { FileCoverageData } from './istanbul.js';

/** The compiled folders whose scripts are measured, relative to the package root. */
export const MEASURED_DIST = ['dist/src/', 'dist/workers/'] as const;

export interface SpawnedCoverage {
  /** Istanbul coverage keyed by source path (src/… or workers/…, absolute). */
  files: Map<string, FileCoverageData>;
  /** Processes that ran the executable and exited normally (one coverage file each). */
  processes: number;
}

/** Sums and converts every coverage file in `dir` for the package at `root`. */
export async function readSpawnedCoverage(dir: string, root: string): Promise<SpawnedCoverage> {
  const prefixes = MEASURED_DIST.map((folder) => pathToFileURL(join(root, folder)).href);
  let merged: ProcessCov = { result: [] };
  let processes = 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const text = await readFile(join(dir, name), 'utf8');
    const written = JSON.parse(text) as ProcessCov;
    const result = written.result.filter((script) => prefixes.some((prefix) => script.url.startsWith(prefix)));
    if (result.length === 0) continue; // a process that ran none of ours (git, npm, a test worker)
    processes += 1;
    merged = mergeProcessCovs([merged, { result }]);
  }

  const files = new Map<string, FileCoverageData>();
  for (const script of merged.result) {
    const path = fileURLToPath(script.url);
    const code = await readFile(path, 'utf8');
    const sourceMap = JSON.parse(await readFile(`${path}.map`, 'utf8')) as { version: number; sources: string[]; mappings: string; names: string[] };
    sourceMap.sources = sourceMap.sources.map((source) => new URL(source, script.url).href);
    const converted = await convert({
      code,
      sourceMap,
      ast: parseAstAsync(code),
      coverage: { url: script.url, functions: script.functions },
    });
    for (const [source, coverage] of Object.entries(converted)) {
      files.set(source, ('data' in coverage ? coverage.data : coverage) as FileCoverageData);
    }
  }
  return { files, processes };
}
