#!/usr/bin/env node
// Writes tests/scheduling/durations.json from the durations vitest recorded in its results cache
// (node_modules/.vite/vitest/<project hash>/results.json) during the last run of each file: the
// order a fresh clone, which has no cache yet, starts the files in (the longest first;
// tests/scheduling/longest-first-sequencer.ts). Run it after a whole `npm test` that passed, on the
// machine the suite is meant to be fast on, and commit the file.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const cacheDir = join(root, 'node_modules/.vite/vitest');
const target = join(root, 'tests/scheduling/durations.json');

const caches = existsSync(cacheDir) ? readdirSync(cacheDir).map((hash) => join(cacheDir, hash, 'results.json')).filter(existsSync) : [];
if (caches.length === 0) {
  console.error(`no vitest results under ${cacheDir}: run the suite (npm test) first`);
  process.exit(1);
}
const seconds = new Map();
for (const cache of caches) {
  for (const [key, result] of JSON.parse(readFileSync(cache, 'utf8')).results) {
    const file = key.slice(key.indexOf(':') + 1);
    if (existsSync(join(root, file)) && result.duration > 0) seconds.set(file, Math.round(result.duration / 100) / 10);
  }
}
const sorted = [...seconds].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
writeFileSync(target, `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
console.log(`${target}: ${sorted.length} files, ${sorted.reduce((sum, [, s]) => sum + s, 0).toFixed(0)} s in all`);
