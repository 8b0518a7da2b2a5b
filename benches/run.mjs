#!/usr/bin/env node
/**
 * Runs the benchmarks by name (`http`, `shared`, `micro`, `harness`, `executor`, `coordination`,
 * `search-libraries`, `reload`, `page`, `federation`; all of them when none is named), one after another so they
 * never load the machine together, and prints one combined table at the end. A run of all of them
 * writes that table into docs/PERFORMANCE.md, between its markers, with the commit, the date,
 * Node and the load average around each benchmark (benches/lib/summary.mjs): every figure there
 * comes from one run of one commit. `--quick` shortens every benchmark (a couple of minutes in
 * all: a developer's check, labelled as such in the table).
 *
 * `npm run bench` · `npm run bench -- --quick` · `npm run bench -- shared` · `npx just bench harness`.
 * Needs `npm run build` first (npm run bench does it).
 * Exit code: 0 when every bar holds, 1 when a bar misses, 2 for a usage error, 3 when a
 * benchmark itself failed.
 */
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

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
  const args = process.argv.slice(2).flatMap((a) => a.split(/[\s,]+/)).filter(Boolean);
  const quick = args.includes('--quick');
  const noWrite = args.includes('--no-write');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknownFlags = args.filter((a) => a.startsWith('--') && a !== '--quick' && a !== '--no-write');
  if (unknownFlags.length > 0) {
    console.error(`unknown option ${unknownFlags.join(', ')}; the options are --quick and --no-write`);
    return 2;
  }
  // Before any benchmark module reads its settings.
  if (quick) process.env.BENCH_QUICK = '1';
  const { MAIN_JS, PACKAGE_ROOT, machine, table } = await import('./lib/common.mjs');
  const { gitState, PERFORMANCE_MD, renderSummary, writeSummary } = await import('./lib/summary.mjs');
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
  const git = gitState(PACKAGE_ROOT);
  const rows = [];
  const ran = [];
  let failed = false;
  for (const name of selected) {
    console.log(`\n=== ${name}${quick ? ' (quick)' : ''} ===`);
    const before = machine().loadavg['1m'];
    const t0 = Date.now();
    let benchFailed = false;
    try {
      const { main: run } = await BENCHES[name]();
      const result = await run();
      rows.push(...result.summaryRows);
    } catch (error) {
      failed = true;
      benchFailed = true;
      console.error(`benchmark ${name} failed: ${error.stack ?? error}`);
      rows.push([name, 'run', 'failed', 'ERROR']);
    }
    ran.push({ name, seconds: (Date.now() - t0) / 1000, load: { before, after: machine().loadavg['1m'] }, failed: benchFailed });
  }
  const m = machine();
  console.log(`\n=== summary (load avg now ${m.loadavg['1m']} / ${m.loadavg['5m']} / ${m.loadavg['15m']}, ${m.cpus} CPUs, node ${m.node}, commit ${git.commit}${git.dirty ? ' + changes' : ''}) ===`);
  console.log(table(['bench', 'measure / bar', 'value', 'verdict'], rows));
  console.log(`took ${Math.round(ran.reduce((s, b) => s + b.seconds, 0))} s: ${ran.map((b) => `${b.name} ${Math.round(b.seconds)} s`).join(' · ')}`);
  if (names.length === 0 && !noWrite) {
    const meta = { ...git, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), node: m.node, cpus: m.cpus, cpuModel: cpus()[0]?.model?.trim() ?? 'unknown', quick, benches: ran };
    writeSummary(PERFORMANCE_MD(PACKAGE_ROOT), renderSummary(meta, rows));
    console.log(`wrote the summary into ${PERFORMANCE_MD(PACKAGE_ROOT)}`);
  } else {
    console.log('docs/PERFORMANCE.md is written only by a run of every benchmark (without --no-write)');
  }
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
