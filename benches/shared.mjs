#!/usr/bin/env node
/**
 * ADR 3, invariant 3: the owner's stdio session pays nothing for the HTTP side.
 *
 * The SAME stdio tools/call (`majordomus_get` of a rule, `majordomus_peers`) over real pipes with
 * raw newline JSON-RPC, one in flight, in three conditions kept alive through every round:
 *   none    `mcp --standalone`
 *   idle    `mcp --http-port 0` (owner of a bound shared server, own temp repo), no HTTP traffic
 *   loaded  the same kind of owner while a separate autocannon process (-c 16) drives its
 *           /mcp tools/call and /api/v1/ routes for the whole measurement
 * measured INTERLEAVED in rounds (order rotated through all permutations) so drift hits all alike.
 * Bars: idle/none ≤ 1.10 and loaded/none ≤ 1.5 at p50; p99 reported as it is.
 *
 * Then cold start (median of ≥ 20, interleaved): a bridge (`mcp` into a checkout that has a
 * server) until its initialize is answered; `mcp --standalone` likewise; bare `node -e ""` to exit.
 * Bar: bridge ≤ 0.6 × standalone. Writes benches/results/shared-latest.json.
 *
 * Environment: BENCH_SHARED_ROUNDS (10), BENCH_SHARED_CALLS (300 per call kind, condition, round),
 * BENCH_SHARED_WARMUP (1000), BENCH_COLD_RUNS (21).
 */
import {
  fmt,
  machine,
  leaseToken,
  makeRepo,
  mcpHeaders,
  mcpInitialize,
  PipeRpc,
  processCpu,
  SERVING_RE,
  spawnNode,
  startCannon,
  summarize,
  median,
  table,
  threadDelta,
  threadTimes,
  verdict,
  withTimeout,
  writeResult,
  runWhenMain,
} from './lib/common.mjs';

const ROUNDS = Number(process.env.BENCH_SHARED_ROUNDS ?? 10);
const CALLS = Number(process.env.BENCH_SHARED_CALLS ?? 300);
const WARMUP = Number(process.env.BENCH_SHARED_WARMUP ?? 1000);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 21);
const LOAD_CONNECTIONS = 16;

const RULE_URI = 'majordomus://rule/g00/rule-0';
const CALL_KINDS = {
  get: { name: 'majordomus_get', arguments: { uri: RULE_URI } },
  peers: { name: 'majordomus_peers', arguments: {} },
};
const CONDITIONS = ['none', 'idle', 'loaded'];
const PERMUTATIONS = [
  ['none', 'idle', 'loaded'],
  ['loaded', 'idle', 'none'],
  ['idle', 'loaded', 'none'],
  ['none', 'loaded', 'idle'],
  ['loaded', 'none', 'idle'],
  ['idle', 'none', 'loaded'],
];
const OWNER_ENV = { MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };

async function call(rpc, kind) {
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request('tools/call', CALL_KINDS[kind]);
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`${kind} failed: ${JSON.stringify(message).slice(0, 300)}`);
  return micros;
}

async function startStandalone(root) {
  const proc = spawnNode(['mcp', '--standalone'], { cwd: root });
  await proc.waitStderr(/to this client alone/);
  const rpc = new PipeRpc(proc);
  await rpc.initialize('bench-none');
  return { proc, rpc };
}

async function startOwner(root, name) {
  const proc = spawnNode(['mcp', '--http-port', '0'], { cwd: root, env: OWNER_ENV });
  const rpc = new PipeRpc(proc);
  // The owner elects and binds before it reads stdin; initialize is answered once it serves.
  await rpc.initialize(name);
  const [, base] = await proc.waitStderr(SERVING_RE);
  return { proc, rpc, base, token: await leaseToken(root) };
}

/** The loaded condition's traffic: /mcp tools/call, /api/v1/ routes and `GET /`, in one autocannon process. */
function loadOptions(base, sessionId, token) {
  const mcp = (name, args) => ({
    method: 'POST',
    path: '/mcp',
    headers: mcpHeaders({ token, sessionId }),
    body: JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name, arguments: args } }),
  });
  // /mcp, commands and peer reads need the lease's token; the open reads are sent it too.
  const get = (path) => ({ method: 'GET', path, headers: { authorization: `Bearer ${token}` } });
  return {
    url: base,
    connections: LOAD_CONNECTIONS,
    idReplacement: true,
    requests: [
      mcp('majordomus_capability', { id: 'objects.get' }),
      get('/api/v1/capability?id=objects.search'),
      mcp('majordomus_get', { uri: 'majordomus://document/area-01/doc-1' }),
      get('/api/v1/search?query=lease%20bridge&limit=20'),
      mcp('majordomus_search', { query: 'snapshot pool', limit: 10 }),
      get(`/api/v1/object?uri=${encodeURIComponent(RULE_URI)}`),
      // The board lives in the main thread: these reach it (over the host RPC) under load too.
      mcp('majordomus_peers', {}),
      get('/api/v1/peers'),
      get('/'),
    ],
    expect: { excludes: ['"isError":true', '"error":{'] },
  };
}

/** Time from spawn until `initialize` is answered (ms); then EOF and a bounded wait for exit. */
async function coldMcp(args, root, env = {}) {
  const t0 = process.hrtime.bigint();
  const proc = spawnNode(args, { cwd: root, env });
  const rpc = new PipeRpc(proc);
  await rpc.initialize('bench-cold');
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const status = await proc.stop(15_000);
  if (status.code !== 0) throw new Error(`${args.join(' ')} exited ${status.code ?? status.signal}:\n${proc.stderr()}`);
  return { ms, stderr: proc.stderr() };
}

async function coldNode() {
  const t0 = process.hrtime.bigint();
  const proc = spawnNode([''], { script: '-e' });
  proc.child.stdin.end();
  const status = await withTimeout(proc.exited, 15_000, 'node -e ""');
  if (status.code !== 0) throw new Error(`node -e "" exited ${status.code}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const repos = {};
  const procs = [];
  let cannon = null;
  const samples = Object.fromEntries(CONDITIONS.map((c) => [c, { get: [], peers: [] }]));
  const perRound = [];
  let load = null;
  let ownerThreads = null;
  let cold = null;
  try {
    for (const c of CONDITIONS) repos[c] = await makeRepo({ rules: 20, documents: 30, prefix: `majordomus-bench-${c}-` });
    const sessions = {};
    sessions.none = await startStandalone(repos.none.root);
    sessions.idle = await startOwner(repos.idle.root, 'bench-idle');
    sessions.loaded = await startOwner(repos.loaded.root, 'bench-loaded');
    for (const s of Object.values(sessions)) procs.push(s.proc);

    // Load on the loaded owner, from a separate process, for the whole measurement.
    const loadSession = await mcpInitialize(sessions.loaded.base, { token: sessions.loaded.token, name: 'bench-load' });
    cannon = startCannon(loadOptions(sessions.loaded.base, loadSession, sessions.loaded.token), { untilStopped: true });
    await withTimeout(cannon.started, 30_000, 'the load to start');

    // Warm-up with the load already running (so the HTTP side is warm too): every condition and
    // call kind, counted in calls, not in time.
    for (const c of CONDITIONS) for (const kind of Object.keys(CALL_KINDS)) for (let i = 0; i < WARMUP; i++) await call(sessions[c].rpc, kind);
    const loadedPid = sessions.loaded.proc.child.pid;
    const threadsBefore = threadTimes(loadedPid);
    const cpuBefore = processCpu(loadedPid);
    const harnessBefore = process.cpuUsage();
    const t0 = Date.now();

    for (let round = 0; round < ROUNDS; round++) {
      const order = PERMUTATIONS[round % PERMUTATIONS.length];
      const row = { round, order: order.join(',') };
      for (const c of order) {
        for (const kind of Object.keys(CALL_KINDS)) {
          const values = [];
          for (let i = 0; i < CALLS; i++) values.push(await call(sessions[c].rpc, kind));
          samples[c][kind].push(...values);
          row[`${c}.${kind}.p50`] = +summarize(values).p50.toFixed(1);
        }
      }
      perRound.push(row);
      process.stderr.write(`shared bench: round ${round + 1}/${ROUNDS} (${row.order}) p50 get µs none ${row['none.get.p50']} idle ${row['idle.get.p50']} loaded ${row['loaded.get.p50']}\n`);
    }

    const wall = (Date.now() - t0) / 1000;
    ownerThreads = threadDelta(threadsBefore, threadTimes(loadedPid), wall);
    const ownerCores = (processCpu(loadedPid) - cpuBefore) / wall;
    const harness = process.cpuUsage(harnessBefore);
    const loadResult = await withTimeout(cannon.stop(), 30_000, 'the load to stop');
    cannon = null;
    load = { ...loadResult, owner_cores: +ownerCores.toFixed(2), harness_cores: +((harness.user + harness.system) / 1e6 / wall).toFixed(2) };
    process.stderr.write(`shared bench: load ${load.rps} req/s, errors ${load.errors}, non-2xx ${load.non2xx}, bad bodies ${load.bad_bodies}\n`);

    // Cold start, interleaved; bridges attach to the idle owner's checkout (which has a server).
    const bridgeMs = [];
    const ownerMs = [];
    const nodeMs = [];
    let bridgeLog = '';
    for (let i = 0; i < COLD_RUNS; i++) {
      const b = await coldMcp(['mcp'], repos.idle.root);
      bridgeMs.push(b.ms);
      bridgeLog = b.stderr;
      ownerMs.push((await coldMcp(['mcp', '--standalone'], repos.none.root)).ms);
      nodeMs.push(await coldNode());
    }
    if (/serving http/.test(bridgeLog)) throw new Error(`the cold "bridge" became a server instead of bridging:\n${bridgeLog}`);
    cold = {
      runs: COLD_RUNS,
      bridge_ms: summarize(bridgeMs),
      standalone_ms: summarize(ownerMs),
      node_ms: summarize(nodeMs),
      bridge_log_sample: bridgeLog.trim().split('\n'),
    };
  } finally {
    if (cannon) await cannon.kill();
    for (const proc of procs) await proc.stop(10_000);
    for (const repo of Object.values(repos)) await repo.cleanup();
  }

  const stats = {};
  for (const c of CONDITIONS) {
    stats[c] = {};
    for (const kind of Object.keys(CALL_KINDS)) stats[c][kind] = summarize(samples[c][kind]);
  }
  const ratio = (c, kind, p) => stats[c][kind][p] / stats.none[kind][p];
  const ratios = {};
  for (const kind of Object.keys(CALL_KINDS)) {
    ratios[kind] = {
      'idle/none p50': +ratio('idle', kind, 'p50').toFixed(3),
      'loaded/none p50': +ratio('loaded', kind, 'p50').toFixed(3),
      'idle/none p99': +ratio('idle', kind, 'p99').toFixed(3),
      'loaded/none p99': +ratio('loaded', kind, 'p99').toFixed(3),
    };
  }
  const coldRatio = cold.bridge_ms.p50 / cold.standalone_ms.p50;
  const loadApplied = load.requests_total > 0 && load.rps > 100;
  const loadClean = load.errors === 0 && load.timeouts === 0 && load.non2xx === 0 && load.bad_bodies === 0;
  const bars = {};
  for (const kind of Object.keys(CALL_KINDS)) {
    bars[`${kind}: idle/none p50 <= 1.10`] = { value: ratios[kind]['idle/none p50'], pass: ratios[kind]['idle/none p50'] <= 1.1 };
    bars[`${kind}: loaded/none p50 <= 1.5`] = { value: ratios[kind]['loaded/none p50'], pass: ratios[kind]['loaded/none p50'] <= 1.5 && loadApplied };
  }
  bars['cold: bridge <= 0.6 x standalone (median)'] = { value: +coldRatio.toFixed(3), pass: coldRatio <= 0.6 };

  const output = {
    name: 'shared',
    started_at: startedAt,
    settings: { rounds: ROUNDS, calls_per_kind_condition_round: CALLS, warmup_per_kind_condition: WARMUP, load_connections: LOAD_CONNECTIONS, client: 'raw newline JSON-RPC over pipes, one in flight' },
    machine_before: machineBefore,
    machine_after: machine(),
    latency_us: stats,
    ratios,
    load: { ...load, applied: loadApplied, clean: loadClean, owner_threads_during_rounds: ownerThreads },
    per_round_p50_us: perRound,
    cold_start: cold,
    bars,
  };
  const file = await writeResult('shared', output);

  const rows = [];
  for (const kind of Object.keys(CALL_KINDS)) {
    for (const c of CONDITIONS) {
      const s = stats[c][kind];
      rows.push([`${CALL_KINDS[kind].name} ${c}`, s.n, fmt(s.p50, 0), fmt(s.p90, 0), fmt(s.p99, 0), c === 'none' ? '' : fmt(ratio(c, kind, 'p50')), c === 'none' ? '' : fmt(ratio(c, kind, 'p99'))]);
    }
  }
  const lines = [
    `Shared server: stdio tools/call latency, ${ROUNDS} interleaved rounds × ${CALLS} calls per kind and condition (load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}; ${machineBefore.cpus} CPUs)`,
    table(['call / condition', 'n', 'p50 µs', 'p90 µs', 'p99 µs', 'x none p50', 'x none p99'], rows),
    `load on the loaded owner: ${load.rps} req/s (autocannon -c ${LOAD_CONNECTIONS}, ${load.requests_total} requests, errors ${load.errors}, timeouts ${load.timeouts}, non-2xx ${load.non2xx}, bad bodies ${load.bad_bodies}); owner process ${load.owner_cores} cores, harness ${load.harness_cores} cores`,
    `owner threads during rounds: ${Object.entries(ownerThreads).filter(([k]) => k !== 'busiest').map(([k, v]) => `${k} ×${v.threads}: ${v.cores} cores`).join('; ')}; busiest: ${ownerThreads.busiest.slice(0, 4).map((t) => `${t.comm === 'main thread' ? 'main' : `tid ${t.tid}`} nice ${t.nice} ${t.cores}`).join(', ')}`,
    '',
    `Cold start (median of ${cold.runs}, interleaved): bridge ${fmt(cold.bridge_ms.p50, 1)} ms · standalone (owner) ${fmt(cold.standalone_ms.p50, 1)} ms · node -e "" ${fmt(cold.node_ms.p50, 1)} ms · bridge/standalone ${fmt(coldRatio, 3)}`,
    table(
      ['cold start', 'p50 ms', 'p90 ms', 'min ms', 'max ms'],
      [
        ['bridge (mcp, server present)', fmt(cold.bridge_ms.p50, 1), fmt(cold.bridge_ms.p90, 1), fmt(cold.bridge_ms.min, 1), fmt(cold.bridge_ms.max, 1)],
        ['mcp --standalone', fmt(cold.standalone_ms.p50, 1), fmt(cold.standalone_ms.p90, 1), fmt(cold.standalone_ms.min, 1), fmt(cold.standalone_ms.max, 1)],
        ['node -e ""', fmt(cold.node_ms.p50, 1), fmt(cold.node_ms.p90, 1), fmt(cold.node_ms.min, 1), fmt(cold.node_ms.max, 1)],
      ],
    ),
    '',
    table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
    loadApplied && loadClean ? 'load applied and clean' : `WARNING: load ${loadApplied ? 'applied' : 'NOT applied'}, ${loadClean ? 'clean' : 'with errors'}`,
    `written ${file}`,
  ];
  console.log(lines.join('\n'));
  return { name: 'shared', output, summaryRows: Object.entries(bars).map(([k, v]) => ['shared', k, v.value, verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
