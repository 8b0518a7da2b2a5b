#!/usr/bin/env node
/**
 * Runs the benchmarks by name (`http`, `shared`, `micro`, `harness`, `executor`, `coordination`, `search-libraries`, `reload`, `page`, `federation`;
 * all of them when none is named), one after another so they never load the machine together, and prints one combined
 * table at the end. `npm run bench -- shared` · `npx just bench harness`. Needs `npm run build` first.
 * Exit code: 0 when every bar holds, 1 when a bar misses, 2 for a usage error, 3 when a
 * benchmark itself failed.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MAIN_JS, machine, table } from './lib/common.mjs';

const BENCHES = {
  http: () => import('./http.mjs'),
  shared: () => import('./shared.mjs'),
  micro: () => import('./micro.mjs'),
  harness: () => import('./harness.mjs'),
  executor: () => import('./executor.mjs'),
  coordination: () => import('./coordination.mjs'),
  'search-libraries': () => import('./search-libraries.mjs'),
  reload: () => import('./reload.mjs'),
  page: () => import('./page.mjs'),
  federation: () => import('./federation.mjs'),
};

async function main() {
  const names = process.argv.slice(2).flatMap((a) => a.split(/[\s,]+/)).filter(Boolean);
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
    return 2;
  }
  if (!existsSync(MAIN_JS)) {
    console.error(`${MAIN_JS} is missing: run \`npm run build\` first`);
    return 2;
  }
  const selected = names.length > 0 ? [...new Set(names)] : Object.keys(BENCHES);
  const rows = [];
  let failed = false;
  for (const name of selected) {
    console.log(`\n=== ${name} ===`);
    try {
      const { main: run } = await BENCHES[name]();
      const result = await run();
      rows.push(...result.summaryRows);
    } catch (error) {
      failed = true;
      console.error(`benchmark ${name} failed: ${error.stack ?? error}`);
      rows.push([name, 'run', 'failed', 'ERROR']);
    }
  }
  const m = machine();
  console.log(`\n=== summary (load avg now ${m.loadavg['1m']} / ${m.loadavg['5m']} / ${m.loadavg['15m']}, ${m.cpus} CPUs, node ${m.node}) ===`);
  console.log(table(['bench', 'measure / bar', 'value', 'verdict'], rows));
  if (failed) return 3;
  return rows.some((r) => r[3] === 'FAIL') ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(error.stack ?? error);
      process.exit(3);
    },
  );
}
