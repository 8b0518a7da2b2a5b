#!/usr/bin/env node
/**
 * Diagnostic (not a bar): two builds of majordomus on the (b) REST load of benches/http.mjs (the
 * same varied, validated calls, answer cache off), beside the raw uWS hello world, in many short
 * interleaved rounds — how an HTTP change is judged on a shared machine whose load moves within
 * seconds. Prints, per build, the median over rounds of its req/s against the hello world's and
 * against the other build's, and its server CPU per request.
 * Usage: node benches/compare-http.mjs <other dist/src/cli/main.js> [rounds=12] [seconds=2]
 * (this checkout's build is "this"; `git archive <rev> | tar -x -C dir`, link node_modules, `npm
 * run build` there, gives the other).
 */
import { fileURLToPath } from 'node:url';
import { fmt, machine, median, spawnNode, table } from './lib/common.mjs';
import { HELLO_NICE, restOptions, roundOrder, runTarget, startServe } from './http.mjs';

const other = process.argv[2];
const ROUNDS = Number(process.argv[3] ?? 12);
const SECONDS = Number(process.argv[4] ?? 2);
if (!other) {
  console.error('usage: node benches/compare-http.mjs <other dist/src/cli/main.js> [rounds] [seconds]');
  process.exit(2);
}

const started = [];
const before = machine();
try {
  const hello = spawnNode([String(HELLO_NICE)], { script: fileURLToPath(new URL('./lib/uws-hello.mjs', import.meta.url)) });
  started.push({ proc: hello });
  const [, port] = await hello.waitStderr(/uws-hello: listening (\d+)/);
  const targets = {
    a: { label: 'raw uWS hello', pid: hello.child.pid, options: { url: `http://127.0.0.1:${port}/`, requests: [{ method: 'GET', path: '/', expect: { includes: '"hello"' } }] } },
  };
  for (const [key, script] of [['this', undefined], ['other', other]]) {
    const server = await startServe(key, { MAJORDOMUS_ANSWER_CACHE: '0' }, started, { script });
    targets[key] = { label: key, pid: server.proc.child.pid, options: restOptions(server.base, server.token, server.plan) };
  }
  const keys = Object.keys(targets);
  for (const key of keys) await runTarget(targets[key], 1);
  const rows = [];
  const cpu = Object.fromEntries(keys.map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const row = {};
    for (const key of roundOrder(keys, round, ROUNDS)) {
      const result = await runTarget(targets[key], SECONDS);
      if (result.problems.length > 0) throw new Error(`${key}: ${result.problems.join('; ')}`);
      row[key] = result.run.rps;
      cpu[key].push(result.server_cpu_us_per_req);
    }
    rows.push(row);
    process.stderr.write(`round ${round + 1}/${ROUNDS}: ${keys.map((k) => `${k} ${row[k]}`).join(' · ')} (load ${machine().loadavg['1m']})\n`);
  }
  const ratio = (x, y) => median(rows.map((r) => r[x] / r[y]));
  console.log(`${ROUNDS} rounds × ${SECONDS} s, load average ${before.loadavg['1m']} → ${machine().loadavg['1m']}`);
  console.log(
    table(
      ['build', 'req/s (median)', '× hello (median of rounds)', '× other (median of rounds)', 'CPU µs/req (median)'],
      ['this', 'other'].map((k) => [k, fmt(median(rows.map((r) => r[k])), 0), fmt(ratio(k, 'a'), 3), fmt(ratio(k, k === 'this' ? 'other' : 'this'), 3), fmt(median(cpu[k]), 1)]),
    ),
  );
} finally {
  for (const { proc, repo } of started) {
    await proc.stop(5_000);
    await repo?.cleanup();
  }
}
