/**
 * Reads the coverage that the spawned executable's processes left in a NODE_V8_COVERAGE folder and
 * maps it back to src/*.ts and workers/*.ts.
 *
 * Node writes one JSON file per process at its exit, with every thread's scripts (the HTTP thread
 * and the pool threads included); a process killed with SIGKILL writes none. Only the package's
 * own compiled scripts (dist/src, dist/workers) are kept; the processes' counts are summed with
 * the merge vitest's v8 provider uses, then converted once per script with the converter it uses
 * (ast-v8-to-istanbul), through the bundler's source maps.
 *
 * Reading, parsing and summing the files is most of the time (a whole run leaves well over a
 * thousand files, about 20 ms each), and it is the last thing the run does, with every core free:
 * the files are shared out among worker threads, one per core, whose sums are then summed. A file
 * that names none of the package's scripts is not parsed at all. A file that is not JSON yet
 * belongs to a process still running (and writing it) as the run ends: it is left out, and
 * counted, like a process killed before it could write one.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { mergeProcessCovs, type ProcessCov } from '@bcoe/v8-coverage';
import { convert } from 'ast-v8-to-istanbul';
import { parseAstAsync } from 'vitest/node';
import type { FileCoverageData } from './istanbul.js';

/** The compiled folders whose scripts are measured, relative to the package root. */
export const MEASURED_DIST = ['dist/src/', 'dist/workers/'] as const;
/** The sources they are bundled from, relative to the package root: what the coverage is of. */
const MEASURED_SOURCES = ['src/', 'workers/'] as const;

export interface SpawnedCoverage {
  /** Istanbul coverage keyed by source path (src/… or workers/…, absolute). */
  files: Map<string, FileCoverageData>;
  /** Processes that ran the executable and exited normally (one coverage file each). */
  processes: number;
  /** Files still being written when they were read (not JSON yet): left out. */
  unfinished: number;
}

/** What one worker thread answers: the sum of its share of the files. */
interface PartialSum {
  merged: ProcessCov;
  processes: number;
  unfinished: number;
}

/**
 * A worker thread's code (CommonJS, run with `eval`): sums the package's scripts of its files. A
 * process that ran none of ours (git, npm, a test worker) is not counted.
 */
const SUM_FILES = `
const { readFileSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const { mergeProcessCovs } = require(workerData.mergeModule);
let merged = { result: [] };
let processes = 0;
let unfinished = 0;
for (const file of workerData.files) {
  const text = readFileSync(file, 'utf8');
  if (!workerData.prefixes.some((prefix) => text.includes(prefix))) continue;
  let written;
  try {
    written = JSON.parse(text);
  } catch {
    unfinished += 1;
    continue;
  }
  const result = written.result.filter((script) => workerData.prefixes.some((prefix) => script.url.startsWith(prefix)));
  if (result.length === 0) continue;
  processes += 1;
  merged = mergeProcessCovs([merged, { result }]);
}
parentPort.postMessage({ merged, processes, unfinished });
`;

function sumInWorker(files: readonly string[], prefixes: readonly string[]): Promise<PartialSum> {
  const mergeModule = createRequire(import.meta.url).resolve('@bcoe/v8-coverage');
  const worker = new Worker(SUM_FILES, { eval: true, workerData: { files, prefixes, mergeModule } });
  return new Promise((resolve, reject) => {
    worker.once('message', (sum: PartialSum) => resolve(sum));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`a coverage worker ended (code ${code}) without its sum`)));
  });
}

/** Sums and converts every coverage file in `dir` for the package at `root`. */
export async function readSpawnedCoverage(dir: string, root: string): Promise<SpawnedCoverage> {
  const prefixes = MEASURED_DIST.map((folder) => pathToFileURL(join(root, folder)).href);
  const names = await readdir(dir).catch(() => [] as string[]);
  const written = names.filter((n) => n.endsWith('.json')).map((name) => join(dir, name));
  // Dealt round-robin, so every worker gets files of every size and age.
  const workers = Math.min(availableParallelism(), written.length);
  const shares = Array.from({ length: workers }, (_, w) => written.filter((_file, i) => i % workers === w));
  const sums = await Promise.all(shares.map((share) => sumInWorker(share, prefixes)));
  const merged = mergeProcessCovs(sums.map((sum) => sum.merged));
  const processes = sums.reduce((total, sum) => total + sum.processes, 0);
  const unfinished = sums.reduce((total, sum) => total + sum.unfinished, 0);

  const files = new Map<string, FileCoverageData>();
  for (const script of merged.result) {
    const path = fileURLToPath(script.url);
    // The bundler writes no map for a script with no source of its own (the chunk of its runtime
    // helpers, an entry that only re-exports): nothing in it is ours to count.
    const mapText = await readFile(`${path}.map`, 'utf8').catch(() => null);
    if (mapText === null) continue;
    const code = await readFile(path, 'utf8');
    const sourceMap = JSON.parse(mapText) as { version: number; sources: string[]; mappings: string; names: string[] };
    sourceMap.sources = sourceMap.sources.map((source) => new URL(source, script.url).href);
    const converted = await convert({
      code,
      sourceMap,
      ast: parseAstAsync(code),
      coverage: { url: script.url, functions: script.functions },
    });
    for (const [source, coverage] of Object.entries(converted)) {
      // A bundle maps to the dependencies it inlined too: only the package's own sources count.
      if (!MEASURED_SOURCES.some((folder) => source.startsWith(join(root, folder)))) continue;
      files.set(source, ('data' in coverage ? coverage.data : coverage) as FileCoverageData);
    }
  }
  return { files, processes, unfinished };
}
