#!/usr/bin/env node
/**
 * Diagnostic (not a bar): where `majordomus serve` spends CPU under the (b) or (c) load of
 * benches/http.mjs — the same varied, validated calls, answer cache off. Runs the server with
 * `--cpu-prof` (the main thread and every worker thread write a profile), drives autocannon from a
 * separate process, stops the server, and prints the top self-time functions per thread profile.
 * Usage: node benches/profile-http.mjs [b|c] [seconds]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir, runCannon, table } from './lib/common.mjs';
import { mcpOptions, restOptions, startServe } from './http.mjs';

const which = process.argv[2] ?? 'b';
const seconds = Number(process.argv[3] ?? 5);

/** Inclusive time of each function name (a recursive name counted once per sample). */
function topTotal(profile, limit = 25) {
  const { nodes, samples, timeDeltas } = profile;
  const parent = new Map();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const total = new Map();
  let busy = 0;
  for (let i = 0; i < samples.length; i++) {
    const dt = timeDeltas[i] ?? 0;
    let id = samples[i];
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    busy += dt;
    const seen = new Set();
    while (id !== undefined) {
      const cf = byId.get(id).callFrame;
      const url = cf.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
      const key = `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
      if (!seen.has(key)) total.set(key, (total.get(key) ?? 0) + dt);
      seen.add(key);
      id = parent.get(id);
    }
  }
  const rows = [...total.entries()].filter(([k]) => !k.startsWith('(root)')).sort((a, b) => b[1] - a[1]).slice(0, limit);
  return rows.map(([k, v]) => [k.slice(0, 110), (v / 1000).toFixed(0), `${((100 * v) / busy).toFixed(1)}%`]);
}

function topSelf(profile, limit = 25) {
  const { nodes, samples, timeDeltas } = profile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i]);
    const dt = timeDeltas[i] ?? 0;
    total += dt;
    const cf = node.callFrame;
    if (cf.functionName === '(idle)') idle += dt;
    const url = cf.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
    const key = `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const busy = total - idle;
  const rows = [...self.entries()].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, limit);
  return { total_ms: total / 1000, busy_ms: busy / 1000, rows: rows.map(([k, v]) => [k.slice(0, 110), (v / 1000).toFixed(0), `${((100 * v) / busy).toFixed(1)}%`]) };
}

const profDir = await makeTempDir('majordomus-prof-');
const started = [];
try {
  const server = await startServe('profile', { MAJORDOMUS_ANSWER_CACHE: '0' }, started, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir.path] });
  const options = which === 'b' ? restOptions(server.base, server.token, server.plan) : mcpOptions(server.base, server.token, server.sessionId, server.plan);
  const run = await runCannon({ ...options, connections: 16, duration: seconds });
  console.log(`(${which}) ${run.rps} req/s over ${server.plan.length} different calls, errors ${run.errors}, non2xx ${run.non2xx}, bad bodies ${run.bad_bodies}`);
  await server.proc.stop();
  for (const file of (await readdir(profDir.path)).sort()) {
    const profile = JSON.parse(await readFile(join(profDir.path, file), 'utf8'));
    const top = topSelf(profile);
    console.log(`\n${file}: ${top.total_ms.toFixed(0)} ms sampled, ${top.busy_ms.toFixed(0)} ms busy (${((top.busy_ms / run.requests_total) * 1000).toFixed(1)} µs per request)`);
    console.log(table(['function (self time)', 'ms', '% of busy'], top.rows));
    if (process.env.PROFILE_TOTAL) console.log(table(['function (inclusive)', 'ms', '% of busy'], topTotal(profile)));
  }
} finally {
  for (const { proc, repo } of started) {
    await proc.stop();
    await repo.cleanup();
  }
  await profDir.cleanup();
}
