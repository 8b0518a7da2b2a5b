#!/usr/bin/env node
/**
 * ADR 3, invariant 3: the owner's stdio session pays little for the HTTP side.
 *
 * The SAME stdio tools/call (`majordomus_get` of a rule, `majordomus_peers`) over real pipes with
 * raw newline JSON-RPC, one in flight, in four conditions:
 *   quiet   `mcp --standalone` (no server) while NO load runs anywhere: the autocannon process is
 *           stopped — what a user who runs no HTTP clients lives in
 *   none    the same standalone process while the load runs against the loaded owner: machine
 *           load without a server in the process
 *   idle    `mcp --http-port 0` (owner of a bound shared server, own temp repo), no HTTP traffic
 *           to it, while the load runs against the other owner
 *   loaded  the owner that a separate autocannon process (-c 16) drives over /mcp tools/call, the
 *           /api/v1/ routes and `GET /` (every request with the lease's token, every body checked)
 * measured INTERLEAVED in rounds: the three loaded-machine conditions in a rotating order, quiet
 * at the end of even rounds and the start of odd ones, so the load is stopped once for two quiet
 * measurements and restarted (and awaited warm) after them.
 * Bars at p50: idle/none ≤ 1.10 (being an owner, the machine equally loaded); loaded/none ≤ 1.5
 * (interference inside the process), only with a clean load (zero errors, timeouts, non-2xx and
 * wrong bodies, ≥ BENCH_SHARED_MIN_LOAD_RPS req/s in every stretch of load). Reported without a
 * bar: loaded/quiet (what the HTTP load costs the owner's client in total, the machine included),
 * idle/quiet and none/quiet; p99 of everything.
 *
 * Then cold start (median of BENCH_COLD_RUNS, interleaved in rotating order, no load running): a
 * bridge (`mcp` into a checkout that has a server) until its initialize is answered; `mcp
 * --standalone` likewise; bare `node -e ""` to exit. Bars: bridge ≤ 1.5 × node -e "" and
 * bridge ≤ 0.6 × standalone. Writes benches/results/shared-latest.json.
 *
 * Environment: BENCH_SHARED_ROUNDS (10), BENCH_SHARED_CALLS (300 per call kind, condition, round),
 * BENCH_SHARED_WARMUP (1000), BENCH_SHARED_MIN_LOAD_RPS (1000), BENCH_COLD_RUNS (21).
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
const MIN_LOAD_RPS = Number(process.env.BENCH_SHARED_MIN_LOAD_RPS ?? 1000);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 21);
const LOAD_CONNECTIONS = 16;
/** Responses the load must have had after a (re)start before anything is measured under it. */
const LOAD_WARM_RESPONSES = 2000;

const RULE_URI = 'majordomus://rule/g00/rule-0';
const DOC_URI = 'majordomus://document/area-01/doc-1';
const CALL_KINDS = {
  get: { name: 'majordomus_get', arguments: { uri: RULE_URI } },
  peers: { name: 'majordomus_peers', arguments: {} },
};
const CONDITIONS = ['quiet', 'none', 'idle', 'loaded'];
/** The conditions measured while the load runs; quiet is measured with it stopped. */
const UNDER_LOAD = ['none', 'idle', 'loaded'];
const PERMUTATIONS = [
  ['none', 'idle', 'loaded'],
  ['loaded', 'idle', 'none'],
  ['idle', 'loaded', 'none'],
  ['none', 'loaded', 'idle'],
  ['loaded', 'none', 'idle'],
  ['idle', 'none', 'loaded'],
];
/** Round `r`: a rotating order of the loaded-machine conditions, quiet last in even rounds and first in odd ones. */
const roundOrder = (round) => {
  const loaded = PERMUTATIONS[round % PERMUTATIONS.length];
  return round % 2 === 0 ? [...loaded, 'quiet'] : ['quiet', ...loaded];
};
const COLD_ORDERS = [
  ['bridge', 'standalone', 'node'],
  ['node', 'bridge', 'standalone'],
  ['standalone', 'node', 'bridge'],
  ['bridge', 'node', 'standalone'],
  ['standalone', 'bridge', 'node'],
  ['node', 'standalone', 'bridge'],
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
  await rpc.initialize('bench-standalone');
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

/**
 * The loaded condition's traffic: /mcp tools/call, /api/v1/ routes and `GET /`, in one autocannon
 * process; every request carries the lease's token and the part of the answer it must get.
 */
function loadOptions(base, sessionId, token) {
  const mcp = (name, args, includes) => ({
    method: 'POST',
    path: '/mcp',
    headers: mcpHeaders({ token, sessionId }),
    body: JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name, arguments: args } }),
    expect: { includes: ['"structuredContent":', includes] },
  });
  // /mcp, commands and peer reads need the token; the open reads are sent it too.
  const get = (path, includes) => ({ method: 'GET', path, headers: { authorization: `Bearer ${token}` }, expect: { includes } });
  return {
    url: base,
    connections: LOAD_CONNECTIONS,
    idReplacement: true,
    warmAfter: LOAD_WARM_RESPONSES,
    requests: [
      mcp('majordomus_capability', { id: 'objects.get' }, '"id":"objects.get"'),
      get('/api/v1/capability?id=objects.search', '"id":"objects.search"'),
      mcp('majordomus_get', { uri: DOC_URI }, `"uri":"${DOC_URI}"`),
      get('/api/v1/search?query=lease%20bridge&limit=20', '"hits":[{'),
      mcp('majordomus_search', { query: 'snapshot pool', limit: 10 }, '"hits":[{'),
      get(`/api/v1/object?uri=${encodeURIComponent(RULE_URI)}`, `"uri":"${RULE_URI}"`),
      // The board lives in the main thread: these reach it (over the host RPC) under load too.
      mcp('majordomus_peers', {}, '"peers":['),
      get('/api/v1/peers', '"peers":['),
      get('/', '"name":"majordomus"'),
    ],
    expect: { excludes: ['"isError":true', '"error":{'] },
  };
}

/**
 * The load on the loaded owner, started and stopped between conditions: `on()` starts it (if it
 * is not running) and waits until it is warm; `off()` stops it and keeps the stretch's summary
 * with the owner's CPU over that stretch.
 */
function loadSwitch(owner, sessionId) {
  const pid = owner.proc.child.pid;
  const stretches = [];
  const ownerCpu = {}; // tid → {comm, nice, cpu_s} summed over the stretches
  let running = null;
  return {
    stretches,
    ownerCpu,
    get running() {
      return running !== null;
    },
    async on() {
      if (running) return;
      const cannon = startCannon(loadOptions(owner.base, sessionId, owner.token), { untilStopped: true });
      running = { cannon };
      await withTimeout(cannon.warm, 60_000, 'the load to warm up');
      Object.assign(running, { threads: threadTimes(pid), cpu: processCpu(pid), cannonCpu: processCpu(cannon.pid), t0: Date.now() });
    },
    async off() {
      if (!running) return;
      const { cannon, threads, cpu, cannonCpu, t0 } = running;
      running = null;
      const wall = (Date.now() - t0) / 1000;
      const after = threadTimes(pid);
      const cores = (processCpu(pid) - cpu) / wall;
      const generatorCores = (processCpu(cannon.pid) - cannonCpu) / wall;
      const result = await withTimeout(cannon.stop(), 30_000, 'the load to stop');
      for (const [tid, a] of Object.entries(after)) {
        ownerCpu[tid] ??= { comm: a.comm, nice: a.nice, cpu_s: 0 };
        ownerCpu[tid].cpu_s += a.cpu_s - (threads[tid]?.cpu_s ?? 0);
      }
      stretches.push({ ...result, measured_wall_s: +wall.toFixed(2), owner_cores: +cores.toFixed(2), generator_cores: +generatorCores.toFixed(2) });
      process.stderr.write(`shared bench: load stretch ${stretches.length}: ${result.rps} req/s, errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}, bad bodies ${result.bad_bodies}\n`);
    },
    async kill() {
      if (running) await running.cannon.kill();
      running = null;
    },
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
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const repos = {};
  const procs = [];
  let load = null;
  const samples = Object.fromEntries(CONDITIONS.map((c) => [c, { get: [], peers: [] }]));
  const perRound = [];
  let harnessCores = null;
  let cold = null;
  try {
    // quiet and none are one standalone process, measured with the load stopped and running.
    for (const r of ['standalone', 'idle', 'loaded']) repos[r] = await makeRepo({ rules: 20, documents: 30, prefix: `majordomus-bench-${r}-` });
    const sessions = {};
    sessions.quiet = await startStandalone(repos.standalone.root);
    sessions.none = sessions.quiet;
    sessions.idle = await startOwner(repos.idle.root, 'bench-idle');
    sessions.loaded = await startOwner(repos.loaded.root, 'bench-loaded');
    procs.push(sessions.quiet.proc, sessions.idle.proc, sessions.loaded.proc);

    const loadSession = await mcpInitialize(sessions.loaded.base, { token: sessions.loaded.token, name: 'bench-load' });
    load = loadSwitch(sessions.loaded, loadSession);

    // Warm-up with the load running (so the HTTP side is warm too): every process and call kind,
    // counted in calls, not in time. Round 1 goes on under the same stretch of load.
    await load.on();
    for (const c of UNDER_LOAD) for (const kind of Object.keys(CALL_KINDS)) for (let i = 0; i < WARMUP; i++) await call(sessions[c].rpc, kind);
    const harnessBefore = process.cpuUsage();
    const t0 = Date.now();

    for (let round = 0; round < ROUNDS; round++) {
      const order = roundOrder(round);
      const row = { round: round + 1, order: order.join(',') };
      for (const c of order) {
        if (c === 'quiet') await load.off();
        else await load.on();
        for (const kind of Object.keys(CALL_KINDS)) {
          const values = [];
          for (let i = 0; i < CALLS; i++) values.push(await call(sessions[c].rpc, kind));
          samples[c][kind].push(...values);
          row[`${c}.${kind}.p50`] = +summarize(values).p50.toFixed(1);
        }
      }
      perRound.push(row);
      process.stderr.write(`shared bench: round ${round + 1}/${ROUNDS} (${row.order}) p50 get µs quiet ${row['quiet.get.p50']} none ${row['none.get.p50']} idle ${row['idle.get.p50']} loaded ${row['loaded.get.p50']}\n`);
    }
    await load.off();
    const harness = process.cpuUsage(harnessBefore);
    harnessCores = +((harness.user + harness.system) / 1e6 / ((Date.now() - t0) / 1000)).toFixed(2);

    // Cold start with no load running, interleaved in rotating order; bridges attach to the idle
    // owner's checkout (which has a server).
    const runs = { bridge: [], standalone: [], node: [] };
    const measureCold = {
      bridge: () => coldMcp(['mcp'], repos.idle.root),
      standalone: () => coldMcp(['mcp', '--standalone'], repos.standalone.root),
      node: () => coldNode(),
    };
    let bridgeLog = '';
    for (let i = 0; i < COLD_RUNS; i++) {
      for (const what of COLD_ORDERS[i % COLD_ORDERS.length]) {
        const result = await measureCold[what]();
        runs[what].push(result.ms);
        if (what === 'bridge') bridgeLog = result.stderr;
      }
    }
    if (/serving http/.test(bridgeLog)) throw new Error(`the cold "bridge" became a server instead of bridging:\n${bridgeLog}`);
    cold = {
      runs: COLD_RUNS,
      bridge_ms: summarize(runs.bridge),
      standalone_ms: summarize(runs.standalone),
      node_ms: summarize(runs.node),
      bridge_log_sample: bridgeLog.trim().split('\n'),
    };
  } finally {
    await load?.kill();
    for (const proc of procs) await proc.stop(10_000);
    for (const repo of Object.values(repos)) await repo.cleanup();
  }

  const stats = {};
  for (const c of CONDITIONS) {
    stats[c] = {};
    for (const kind of Object.keys(CALL_KINDS)) stats[c][kind] = summarize(samples[c][kind]);
  }
  const ratio = (c, base, kind, p) => stats[c][kind][p] / stats[base][kind][p];
  const RATIOS = [
    ['idle', 'none'],
    ['loaded', 'none'],
    ['loaded', 'quiet'],
    ['idle', 'quiet'],
    ['none', 'quiet'],
  ];
  const ratios = {};
  for (const kind of Object.keys(CALL_KINDS)) {
    ratios[kind] = {};
    for (const p of ['p50', 'p99']) for (const [c, base] of RATIOS) ratios[kind][`${c}/${base} ${p}`] = +ratio(c, base, kind, p).toFixed(3);
  }

  // The load: every stretch clean and at least MIN_LOAD_RPS.
  const stretches = load.stretches;
  const loadTotals = {
    stretches: stretches.length,
    requests_total: stretches.reduce((s, r) => s + r.requests_total, 0),
    seconds: +stretches.reduce((s, r) => s + r.duration_s, 0).toFixed(2),
    errors: stretches.reduce((s, r) => s + r.errors, 0),
    timeouts: stretches.reduce((s, r) => s + r.timeouts, 0),
    non2xx: stretches.reduce((s, r) => s + r.non2xx, 0),
    bad_bodies: stretches.reduce((s, r) => s + r.bad_bodies, 0),
    bodies_checked: stretches.reduce((s, r) => s + r.bodies_checked, 0),
    first_bad_body: stretches.find((r) => r.first_bad_body)?.first_bad_body ?? null,
    min_stretch_rps: Math.min(...stretches.map((r) => r.rps)),
  };
  loadTotals.rps = +(loadTotals.requests_total / loadTotals.seconds).toFixed(1);
  const measuredWall = stretches.reduce((s, r) => s + r.measured_wall_s, 0);
  const coresOver = (field) => +(stretches.reduce((s, r) => s + r[field] * r.measured_wall_s, 0) / measuredWall).toFixed(2);
  loadTotals.owner_cores = coresOver('owner_cores');
  loadTotals.generator_cores = coresOver('generator_cores');
  const ownerThreads = threadDelta({}, load.ownerCpu, measuredWall);
  const loadClean = stretches.length > 0 && loadTotals.errors === 0 && loadTotals.timeouts === 0 && loadTotals.non2xx === 0 && loadTotals.bad_bodies === 0 && loadTotals.bodies_checked >= loadTotals.requests_total;
  const loadFast = stretches.length > 0 && loadTotals.min_stretch_rps >= MIN_LOAD_RPS;
  const loadOk = loadClean && loadFast;

  const coldVsNode = cold.bridge_ms.p50 / cold.node_ms.p50;
  const coldVsStandalone = cold.bridge_ms.p50 / cold.standalone_ms.p50;
  const bars = {};
  for (const kind of Object.keys(CALL_KINDS)) {
    bars[`${kind}: idle/none p50 <= 1.10`] = { value: ratios[kind]['idle/none p50'], pass: ratios[kind]['idle/none p50'] <= 1.1 };
    bars[`${kind}: loaded/none p50 <= 1.5 (clean load)`] = { value: ratios[kind]['loaded/none p50'], pass: ratios[kind]['loaded/none p50'] <= 1.5 && loadOk };
  }
  bars[`load clean, every stretch >= ${MIN_LOAD_RPS} req/s`] = { value: `${fmt(loadTotals.min_stretch_rps, 0)} req/s, ${loadTotals.errors + loadTotals.timeouts + loadTotals.non2xx + loadTotals.bad_bodies} bad`, pass: loadOk };
  bars['cold: bridge <= 1.5 x node -e "" (median)'] = { value: +coldVsNode.toFixed(3), pass: coldVsNode <= 1.5 };
  bars['cold: bridge <= 0.6 x mcp --standalone (median)'] = { value: +coldVsStandalone.toFixed(3), pass: coldVsStandalone <= 0.6 };

  const output = {
    name: 'shared',
    started_at: startedAt,
    settings: {
      rounds: ROUNDS,
      calls_per_kind_condition_round: CALLS,
      warmup_per_kind_condition: WARMUP,
      load_connections: LOAD_CONNECTIONS,
      load_warm_responses: LOAD_WARM_RESPONSES,
      min_load_rps: MIN_LOAD_RPS,
      client: 'raw newline JSON-RPC over pipes, one in flight',
    },
    machine_before: machineBefore,
    machine_after: machine(),
    latency_us: stats,
    ratios,
    load: { ...loadTotals, clean: loadClean, fast_enough: loadFast, harness_cores: harnessCores, owner_threads_under_load: ownerThreads, stretches },
    per_round_p50_us: perRound,
    cold_start: { ...cold, 'bridge/node': +coldVsNode.toFixed(3), 'bridge/standalone': +coldVsStandalone.toFixed(3) },
    bars,
  };
  const file = await writeResult('shared', output);

  const rows = [];
  for (const kind of Object.keys(CALL_KINDS)) {
    for (const c of CONDITIONS) {
      const s = stats[c][kind];
      const vs = (base, p) => (c === base ? '' : fmt(ratio(c, base, kind, p)));
      rows.push([`${CALL_KINDS[kind].name} ${c}`, s.n, fmt(s.p50, 0), fmt(s.p90, 0), fmt(s.p99, 0), vs('quiet', 'p50'), c === 'quiet' ? '' : vs('none', 'p50'), vs('quiet', 'p99'), c === 'quiet' ? '' : vs('none', 'p99')]);
    }
  }
  const coldRow = (label, s) => [label, fmt(s.p50, 1), fmt(s.p90, 1), fmt(s.min, 1), fmt(s.max, 1)];
  const lines = [
    `Shared server: stdio tools/call latency, ${ROUNDS} interleaved rounds × ${CALLS} calls per kind and condition (load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}; ${machineBefore.cpus} CPUs)`,
    'quiet = mcp --standalone, no load anywhere · none = the same process while the load runs on the loaded owner · idle = owner of a bound server, no traffic to it · loaded = owner under the load',
    table(['call / condition', 'n', 'p50 µs', 'p90 µs', 'p99 µs', '× quiet p50', '× none p50', '× quiet p99', '× none p99'], rows),
    `load on the loaded owner: ${loadTotals.rps} req/s over ${loadTotals.stretches} stretches (slowest ${fmt(loadTotals.min_stretch_rps, 0)}; autocannon -c ${LOAD_CONNECTIONS}, ${loadTotals.requests_total} requests, errors ${loadTotals.errors}, timeouts ${loadTotals.timeouts}, non-2xx ${loadTotals.non2xx}, bad bodies ${loadTotals.bad_bodies}${loadTotals.first_bad_body ? ` (${loadTotals.first_bad_body})` : ''}); owner process ${loadTotals.owner_cores} cores, load generator ${loadTotals.generator_cores} cores, harness ${harnessCores} cores`,
    `owner threads under load: ${Object.entries(ownerThreads).filter(([k]) => k !== 'busiest').map(([k, v]) => `${k} ×${v.threads}: ${v.cores} cores`).join('; ')}; busiest: ${ownerThreads.busiest.slice(0, 4).map((t) => `${t.comm === 'main thread' ? 'main' : `tid ${t.tid}`} nice ${t.nice} ${t.cores}`).join(', ')}`,
    '',
    `Cold start (median of ${cold.runs}, interleaved, no load): bridge ${fmt(cold.bridge_ms.p50, 1)} ms · mcp --standalone ${fmt(cold.standalone_ms.p50, 1)} ms · node -e "" ${fmt(cold.node_ms.p50, 1)} ms · bridge/node ${fmt(coldVsNode, 3)} · bridge/standalone ${fmt(coldVsStandalone, 3)}`,
    table(
      ['cold start', 'p50 ms', 'p90 ms', 'min ms', 'max ms'],
      [coldRow('bridge (mcp, server present)', cold.bridge_ms), coldRow('mcp --standalone', cold.standalone_ms), coldRow('node -e ""', cold.node_ms)],
    ),
    '',
    table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
    `reported, no bar: ${Object.keys(CALL_KINDS).map((k) => `${k} loaded/quiet ${fmt(ratios[k]['loaded/quiet p50'])} · idle/quiet ${fmt(ratios[k]['idle/quiet p50'])} · none/quiet ${fmt(ratios[k]['none/quiet p50'])}`).join(' | ')} (p50)`,
    `written ${file}`,
  ];
  console.log(lines.join('\n'));
  return { name: 'shared', output, summaryRows: Object.entries(bars).map(([k, v]) => ['shared', k, v.value, verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
