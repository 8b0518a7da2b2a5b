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
 * Then cold start, measured as an MCP client sees it (median of BENCH_COLD_RUNS, interleaved in
 * rotating orders, no load running): the client spawns the command its configuration names with
 * pipes for stdio, writes `initialize` at once and waits for the answer's line — a bridge (`mcp`
 * into a checkout that has a server), `mcp --standalone`, and this checkout's own launcher
 * (bin/majordomus-mcp, what its .mcp.json starts) — against bare `node -e ""` spawned the same
 * way, timed to its exit. Each in two environments: the bench's own, passed on whole (a client
 * that passes its environment on), and only the variables the MCP SDK's stdio client passes by
 * default (HOME, LOGNAME, PATH, SHELL, TERM, USER). The environment matters to the ratio: a cost
 * every node process pays at its start (this machine's NODE_EXTRA_CA_CERTS, a CA bundle read and
 * parsed by every process, 25–50 ms here) is added to both sides. Bars, the environment passed
 * on: bridge ≤ 1.5 × node -e "" (issue 8; goal 1.2) and bridge ≤ 0.6 × standalone. Reported:
 * the same ratio in the SDK's environment, and the launcher's. Writes
 * benches/results/shared-latest.json.
 *
 * Environment: BENCH_SHARED_ROUNDS (10), BENCH_SHARED_CALLS (300 per call kind, condition, round),
 * BENCH_SHARED_WARMUP (1000), BENCH_SHARED_MIN_LOAD_RPS (1000), BENCH_COLD_RUNS (21).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  fmt,
  MAIN_JS,
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
  knob,
} from './lib/common.mjs';

const ROUNDS = knob('BENCH_SHARED_ROUNDS', 10, 2);
const CALLS = knob('BENCH_SHARED_CALLS', 300, 40);
const WARMUP = knob('BENCH_SHARED_WARMUP', 1000, 60);
const MIN_LOAD_RPS = knob('BENCH_SHARED_MIN_LOAD_RPS', 1000);
const COLD_RUNS = knob('BENCH_COLD_RUNS', 21, 5);
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
/** What cold start measures, interleaved: the order rotates each run and reverses every other. */
const COLD_VARIANTS = ['bridge', 'node', 'standalone', 'launcher', 'bridge (SDK env)', 'node (SDK env)'];
const coldOrder = (run) => {
  const shift = run % COLD_VARIANTS.length;
  const rotated = [...COLD_VARIANTS.slice(shift), ...COLD_VARIANTS.slice(0, shift)];
  return run % 2 === 1 ? rotated.reverse() : rotated;
};
/** The variables the MCP SDK's stdio client passes a server by default (getDefaultEnvironment). */
const SDK_ENV_NAMES = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
const LAUNCHER = fileURLToPath(new URL('../bin/majordomus-mcp', import.meta.url));
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

/** The environment a cold start runs in: the bench's own (without its log level), or the SDK's default. */
function coldEnv(sdk) {
  const env = { ...process.env };
  delete env.MAJORDOMUS_LOG;
  if (!sdk) return env;
  return Object.fromEntries(SDK_ENV_NAMES.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
}

/**
 * As a client starts a server: spawn `command args` with pipes, write `initialize` at once, and
 * stop the clock at the answer's line (ms); then EOF and a bounded wait for the exit, untimed.
 */
async function coldClient(command, args, root, env) {
  const t0 = process.hrtime.bigint();
  const child = spawn(command, args, { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.on('error', () => undefined);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-cold', version: '0' } } })}\n`);
  let out = '';
  child.stdout.setEncoding('utf8');
  const answered = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(Number(process.hrtime.bigint() - t0) / 1e6);
    });
    exited.then((s) => reject(new Error(`${command} ${args.join(' ')} exited (${s.code ?? s.signal}) before answering initialize:\n${stderr}`)));
  });
  const ms = await withTimeout(answered, 30_000, `initialize answered by ${command} ${args.join(' ')}`);
  if (!out.includes('"result"')) throw new Error(`${command} ${args.join(' ')} refused initialize: ${out.slice(0, 300)}`);
  child.stdin.end();
  const status = await withTimeout(exited, 15_000, `${command} ${args.join(' ')} to exit after EOF`).catch(() => {
    child.kill('SIGKILL');
    return { code: null, signal: 'SIGKILL' };
  });
  if (status.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${status.code ?? status.signal}:\n${stderr}`);
  return { ms, stderr };
}

/** `node -e ""`, spawned as the client spawns a server (pipes, the same environment), timed to its exit. */
async function coldNode(env) {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, ['-e', ''], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  child.stdout.resume();
  child.stderr.resume();
  const status = await withTimeout(new Promise((resolve) => child.once('exit', (code) => resolve({ code }))), 15_000, 'node -e ""');
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

    // Cold start with no load running, interleaved; bridges (and the launcher, which starts
    // one) attach to the idle owner's checkout, which has a server.
    const runs = Object.fromEntries(COLD_VARIANTS.map((v) => [v, []]));
    const passed = coldEnv(false);
    const sdk = coldEnv(true);
    const measureCold = {
      bridge: () => coldClient(process.execPath, [MAIN_JS, 'mcp'], repos.idle.root, passed),
      node: () => coldNode(passed),
      standalone: () => coldClient(process.execPath, [MAIN_JS, 'mcp', '--standalone'], repos.standalone.root, passed),
      launcher: () => coldClient(LAUNCHER, [], repos.idle.root, { ...passed, MAJORDOMUS_BIN: '' }),
      'bridge (SDK env)': () => coldClient(process.execPath, [MAIN_JS, 'mcp'], repos.idle.root, sdk),
      'node (SDK env)': () => coldNode(sdk),
    };
    let bridgeLog = '';
    for (let i = 0; i < COLD_RUNS; i++) {
      for (const what of coldOrder(i)) {
        const result = await measureCold[what]();
        runs[what].push(result.ms);
        if (what === 'bridge' || what === 'bridge (SDK env)' || what === 'launcher') bridgeLog += result.stderr;
      }
    }
    if (/serving http/.test(bridgeLog)) throw new Error(`a cold "bridge" became a server instead of bridging:\n${bridgeLog}`);
    cold = {
      runs: COLD_RUNS,
      how: 'spawn with pipes → initialize written at once → its answer line (node -e "": to its exit)',
      ms: Object.fromEntries(COLD_VARIANTS.map((v) => [v, summarize(runs[v])])),
      bridge_log_sample: bridgeLog.trim().split('\n').slice(0, 6),
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

  const coldP50 = (v) => cold.ms[v].p50;
  const coldVsNode = coldP50('bridge') / coldP50('node');
  const coldVsStandalone = coldP50('bridge') / coldP50('standalone');
  const coldSdk = coldP50('bridge (SDK env)') / coldP50('node (SDK env)');
  const coldLauncher = coldP50('launcher') / coldP50('node');
  const bars = {};
  for (const kind of Object.keys(CALL_KINDS)) {
    bars[`${kind}: idle/none p50 <= 1.10`] = { value: ratios[kind]['idle/none p50'], pass: ratios[kind]['idle/none p50'] <= 1.1 };
    bars[`${kind}: loaded/none p50 <= 1.5 (clean load)`] = { value: ratios[kind]['loaded/none p50'], pass: ratios[kind]['loaded/none p50'] <= 1.5 && loadOk };
  }
  bars[`load clean, every stretch >= ${MIN_LOAD_RPS} req/s`] = { value: `${fmt(loadTotals.min_stretch_rps, 0)} req/s, ${loadTotals.errors + loadTotals.timeouts + loadTotals.non2xx + loadTotals.bad_bodies} bad`, pass: loadOk };
  bars['cold, as a client sees it: bridge <= 1.5 x node -e "" (goal 1.2; environment passed on; p50)'] = {
    value: `${coldVsNode.toFixed(3)} (${fmt(coldP50('bridge'), 1)} / ${fmt(coldP50('node'), 1)} ms)`,
    pass: coldVsNode <= 1.5,
  };
  bars['cold: bridge <= 0.6 x mcp --standalone (p50)'] = { value: +coldVsStandalone.toFixed(3), pass: coldVsStandalone <= 0.6 };
  bars['cold: bridge / node -e "" in the MCP SDK\'s default environment (reported)'] = {
    value: `${coldSdk.toFixed(3)} (${fmt(coldP50('bridge (SDK env)'), 1)} / ${fmt(coldP50('node (SDK env)'), 1)} ms)`,
    info: true,
  };
  bars['cold: bin/majordomus-mcp (the launcher) / node -e "" (reported)'] = { value: `${coldLauncher.toFixed(3)} (${fmt(coldP50('launcher'), 1)} ms)`, info: true };

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
    cold_start: { ...cold, 'bridge/node': +coldVsNode.toFixed(3), 'bridge/standalone': +coldVsStandalone.toFixed(3), 'bridge/node SDK env': +coldSdk.toFixed(3), 'launcher/node': +coldLauncher.toFixed(3) },
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
    `Cold start as a client sees it (${cold.how}; median of ${cold.runs}, interleaved, no load): bridge/node ${fmt(coldVsNode, 3)} · bridge/standalone ${fmt(coldVsStandalone, 3)} · in the SDK's environment bridge/node ${fmt(coldSdk, 3)} · launcher/node ${fmt(coldLauncher, 3)}`,
    table(['cold start', 'p50 ms', 'p90 ms', 'min ms', 'max ms'], COLD_VARIANTS.map((v) => coldRow(v, cold.ms[v]))),
    '',
    table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, v.info ? 'info' : verdict(v.pass)])),
    `reported, no bar: ${Object.keys(CALL_KINDS).map((k) => `${k} loaded/quiet ${fmt(ratios[k]['loaded/quiet p50'])} · idle/quiet ${fmt(ratios[k]['idle/quiet p50'])} · none/quiet ${fmt(ratios[k]['none/quiet p50'])}`).join(' | ')} (p50)`,
    `written ${file}`,
  ];
  console.log(lines.join('\n'));
  return { name: 'shared', output, summaryRows: Object.entries(bars).map(([k, v]) => ['shared', k, v.value, v.info ? 'info' : verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
