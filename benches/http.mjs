#!/usr/bin/env node
/**
 * HTTP throughput and latency, autocannon from a separate process, same settings for all four:
 *   (a) raw uWS hello world (same uWS package, own process)             — the ceiling
 *   (b) GET /api/v1/capability?id=objects.get through `majordomus serve`
 *   (c) POST /mcp tools/call majordomus_capability {id: objects.get} with a session
 *   (d) the MCP SDK's own Streamable HTTP server (node:http + WebStandardStreamableHTTPServerTransport,
 *       one McpServer per session, enableJsonResponse) answering the same JSON — the reference
 *   (b′)(c′) the same as (b)(c) with the answer cache off (MAJORDOMUS_ANSWER_CACHE=0), so every
 *       call takes the pool hop — printed for information, not judged
 * Bars: c/d ≥ 3 and b/a ≥ 0.2 (requests/s). Every run's errors, non-2xx and response bodies are
 * checked so a broken run is visible. Writes benches/results/http-latest.json.
 *
 * Environment: BENCH_HTTP_DURATION (s, default 10), BENCH_HTTP_WARMUP (s, default 2),
 * BENCH_HTTP_CONNECTIONS (default 16).
 */
import { fileURLToPath } from 'node:url';
import {
  fmt,
  machine,
  makeRepo,
  mcpCall,
  mcpInitialize,
  processCpu,
  runCannon,
  SERVING_RE,
  spawnNode,
  table,
  threadDelta,
  threadTimes,
  verdict,
  writeResult,
  runWhenMain,
} from './lib/common.mjs';

const DURATION = Number(process.env.BENCH_HTTP_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_HTTP_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const UWS_HELLO = fileURLToPath(new URL('./lib/uws-hello.mjs', import.meta.url));
const SDK_SERVER = fileURLToPath(new URL('./lib/sdk-server.mjs', import.meta.url));

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const TOOLS_CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: '[<id>]', // unique per request (idReplacement): the SDK maps responses by request id
  method: 'tools/call',
  params: { name: 'majordomus_capability', arguments: { id: 'objects.get' } },
});

/** Warm-up then the measured run, same options; `pid` is sampled for per-thread CPU. */
async function measure(label, options, pid) {
  const loadavgBefore = machine().loadavg['1m'];
  const warm = await runCannon({ ...options, connections: CONNECTIONS, duration: WARMUP });
  const before = pid ? threadTimes(pid) : null;
  const cpuBefore = pid ? processCpu(pid) : NaN;
  const t0 = Date.now();
  const run = await runCannon({ ...options, connections: CONNECTIONS, duration: DURATION });
  const wall = (Date.now() - t0) / 1000;
  const threads = pid ? threadDelta(before, threadTimes(pid), wall) : null;
  const serverCores = pid ? +((processCpu(pid) - cpuBefore) / wall).toFixed(2) : null;
  const problems = [];
  for (const [name, r] of [
    ['warm-up', warm],
    ['run', run],
  ]) {
    if (r.errors || r.timeouts || r.non2xx || r.bad_bodies) {
      problems.push(`${name}: errors ${r.errors}, timeouts ${r.timeouts}, non-2xx ${r.non2xx}, bad bodies ${r.bad_bodies}${r.first_bad_body ? ` (${r.first_bad_body})` : ''}`);
    }
  }
  if (run.requests_total === 0) problems.push('run: no request completed');
  process.stderr.write(`http bench: ${label}: ${run.rps} req/s, p50 ${run.latency_ms.p50} ms, p99 ${run.latency_ms.p99} ms${problems.length ? ` — ${problems.join('; ')}` : ''}\n`);
  return { label, loadavg_before: loadavgBefore, warmup: warm, run, server_cores: serverCores, server_threads: threads, problems };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const repo = await makeRepo({ rules: 20, documents: 30 });
  const started = [];
  const results = {};
  let answer;
  try {
    // (b) and (c): the full stack — as shipped, then without the answer cache (informational:
    // every call then takes the pool hop).
    const fullStack = async (suffix, env) => {
      const serve = spawnNode(['serve', '--port', '0'], { cwd: repo.root, env });
      started.push(serve);
      const [, base] = await serve.waitStderr(SERVING_RE);
      const capRes = await fetch(`${base}/api/v1/capability?id=objects.get`);
      answer = await capRes.json();
      if (capRes.status !== 200 || answer.id !== 'objects.get') throw new Error(`GET /api/v1/capability answered ${capRes.status}: ${JSON.stringify(answer)}`);
      const sessionId = await mcpInitialize(base);
      const viaMcp = await mcpCall(base, sessionId, 'majordomus_capability', { id: 'objects.get' });
      if (JSON.stringify(viaMcp.result?.structuredContent) !== JSON.stringify(answer)) throw new Error(`/mcp tools/call answered differently: ${JSON.stringify(viaMcp).slice(0, 400)}`);
      const servePid = serve.child.pid;
      const threadCount = Object.keys(threadTimes(servePid)).length;
      const b = await measure(
        `(b${suffix}) GET /api/v1/capability`,
        { url: base, requests: [{ method: 'GET', path: '/api/v1/capability?id=objects.get' }], expect: { includes: '"id":"objects.get"', excludes: ['"error":{'] } },
        servePid,
      );
      const c = await measure(
        `(c${suffix}) POST /mcp tools/call`,
        {
          url: base,
          idReplacement: true,
          requests: [{ method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId }, body: TOOLS_CALL_BODY }],
          expect: { includes: '"structuredContent"', excludes: ['"isError":true', '"error":{'] },
        },
        servePid,
      );
      b.threads_in_process = threadCount;
      c.threads_in_process = threadCount;
      await serve.stop();
      return { b, c };
    };

    // (a) the ceiling.
    const hello = spawnNode([], { script: UWS_HELLO });
    started.push(hello);
    const [, helloPort] = await hello.waitStderr(/uws-hello: listening (\d+)/);
    results.a = await measure('(a) raw uWS hello', { url: `http://127.0.0.1:${helloPort}/`, requests: [{ method: 'GET', path: '/' }], expect: { includes: '"hello"' } }, hello.child.pid);
    await hello.stop();

    ({ b: results.b, c: results.c } = await fullStack('', {}));
    ({ b: results.b_uncached, c: results.c_uncached } = await fullStack("'", { MAJORDOMUS_ANSWER_CACHE: '0' }));

    // (d) the SDK reference.
    const sdk = spawnNode([JSON.stringify({ 'objects.get': answer })], { script: SDK_SERVER });
    started.push(sdk);
    const [, sdkPort] = await sdk.waitStderr(/sdk-server: listening (\d+)/);
    const sdkBase = `http://127.0.0.1:${sdkPort}`;
    const sdkSession = await mcpInitialize(sdkBase);
    const viaSdk = await mcpCall(sdkBase, sdkSession, 'majordomus_capability', { id: 'objects.get' });
    if (JSON.stringify(viaSdk.result?.structuredContent) !== JSON.stringify(answer)) throw new Error(`SDK server answered differently: ${JSON.stringify(viaSdk).slice(0, 400)}`);
    results.d = await measure(
      '(d) MCP SDK Streamable HTTP',
      {
        url: sdkBase,
        idReplacement: true,
        requests: [{ method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, 'mcp-session-id': sdkSession }, body: TOOLS_CALL_BODY }],
        expect: { includes: '"structuredContent"', excludes: ['"isError":true', '"error":{'] },
      },
      sdk.child.pid,
    );
    await sdk.stop();
  } finally {
    for (const proc of started) await proc.stop(5_000);
    await repo.cleanup();
  }

  const ratioBA = results.b.run.rps / results.a.run.rps;
  const ratioCD = results.c.run.rps / results.d.run.rps;
  const uncached = {
    "b'/a (no answer cache)": +(results.b_uncached.run.rps / results.a.run.rps).toFixed(3),
    "c'/d (no answer cache)": +(results.c_uncached.run.rps / results.d.run.rps).toFixed(2),
  };
  const bars = {
    'c/d >= 3': { value: +ratioCD.toFixed(2), pass: ratioCD >= 3 },
    'b/a >= 0.2': { value: +ratioBA.toFixed(3), pass: ratioBA >= 0.2 },
  };
  const clean = Object.values(results).every((r) => r.problems.length === 0);
  const output = {
    name: 'http',
    started_at: startedAt,
    settings: { connections: CONNECTIONS, duration_s: DURATION, warmup_s: WARMUP, load_generator: 'autocannon 9.0.0 in a separate process' },
    machine_before: machineBefore,
    machine_after: machine(),
    results,
    ratios: { 'b/a': +ratioBA.toFixed(3), 'c/d': +ratioCD.toFixed(2), ...uncached },
    bars,
    clean,
  };
  const file = await writeResult('http', output);

  const rows = Object.values(results).map((r) => [
    r.label,
    fmt(r.run.rps, 0),
    fmt(r.run.latency_ms.mean, 2),
    fmt(r.run.latency_ms.p50, 0),
    fmt(r.run.latency_ms.p99, 0),
    r.run.requests_total,
    `${r.run.errors}/${r.run.timeouts}/${r.run.non2xx}/${r.run.bad_bodies}`,
    r.server_cores ?? '',
    r.server_cores ? fmt((r.server_cores * 1e6) / r.run.rps, 0) : '',
    r.loadavg_before,
  ]);
  const lines = [
    `HTTP (autocannon -c ${CONNECTIONS}, ${DURATION} s after ${WARMUP} s warm-up; load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}; ${machineBefore.cpus} CPUs)`,
    table(['target', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'requests', 'err/tmo/non2xx/bad', 'server cores', 'CPU µs/req', 'load1'], rows),
    '(autocannon records latency in whole milliseconds: p50/p99 of 0 mean < 1 ms; the mean keeps the fraction)',
    '',
    table(
      ['bar', 'value', 'verdict'],
      Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)]),
    ),
    `informational: ${Object.entries(uncached).map(([k, v]) => `${k} ${v}`).join(' · ')}`,
    clean ? 'all runs clean (no errors, timeouts, non-2xx or bad bodies)' : 'WARNING: some runs had errors — see problems in the JSON',
    `written ${file}`,
  ];
  console.log(lines.join('\n'));
  return { name: 'http', output, summaryRows: Object.entries(bars).map(([k, v]) => ['http', k, v.value, verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
