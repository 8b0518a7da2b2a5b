#!/usr/bin/env node
/**
 * Diagnostic (not a bar): where `majordomus serve` spends CPU under the (b) or (c) load of
 * benches/http.mjs. Runs the server with `--cpu-prof` (main thread and every worker thread write
 * a profile), drives autocannon from a separate process, stops the server, and prints the top
 * self-time functions per thread profile. Usage: node benches/profile-http.mjs [b|c] [seconds]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { leaseToken, makeRepo, makeTempDir, mcpHeaders, mcpInitialize, runCannon, SERVING_RE, spawnNode, table } from './lib/common.mjs';

const which = process.argv[2] ?? 'c';
const seconds = Number(process.argv[3] ?? 5);

function topSelf(profile, limit = 14) {
  const { nodes, samples, timeDeltas } = profile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i]);
    const dt = timeDeltas[i] ?? 0;
    total += dt;
    const cf = node.callFrame;
    const url = cf.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
    const key = `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return { total_ms: total / 1000, rows: rows.map(([k, v]) => [k.slice(0, 110), (v / 1000).toFixed(0), `${((100 * v) / total).toFixed(1)}%`]) };
}

const repo = await makeRepo({ rules: 20, documents: 30 });
const profDir = await makeTempDir('majordomus-prof-');
const serve = spawnNode(['serve', '--port', '0'], { cwd: repo.root, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir.path] });
try {
  const [, base] = await serve.waitStderr(SERVING_RE);
  const token = await leaseToken(repo.root);
  const session = await mcpInitialize(base, { token });
  const options =
    which === 'b'
      ? { url: base, requests: [{ method: 'GET', path: '/api/v1/capability?id=objects.get', headers: { authorization: `Bearer ${token}` } }] }
      : {
          url: base,
          idReplacement: true,
          requests: [
            {
              method: 'POST',
              path: '/mcp',
              headers: mcpHeaders({ token, sessionId: session }),
              body: JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'majordomus_capability', arguments: { id: 'objects.get' } } }),
            },
          ],
        };
  const run = await runCannon({ ...options, connections: 16, duration: seconds });
  console.log(`(${which}) ${run.rps} req/s, errors ${run.errors}, non2xx ${run.non2xx}`);
  await serve.stop();
  for (const file of (await readdir(profDir.path)).sort()) {
    const profile = JSON.parse(await readFile(join(profDir.path, file), 'utf8'));
    const top = topSelf(profile);
    console.log(`\n${file}: ${top.total_ms.toFixed(0)} ms sampled`);
    console.log(table(['function (self time)', 'ms', '%'], top.rows));
  }
} finally {
  await serve.stop();
  await profDir.cleanup();
  await repo.cleanup();
}
