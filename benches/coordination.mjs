#!/usr/bin/env node
/**
 * Coordination (issue 12): what claims and messages cost the agent that asks, measured in one run.
 *
 * Two owners (`mcp --http-port 0`, each in its own temporary git repository), each with PEERS
 * peers attached over `/mcp` (benches/lib/peers.mjs, a process of its own: an MCP session per peer
 * with the lease's token and its stream open, as a bridge attaches — without 20 bridge processes
 * on two cores). On the `claims` owner every peer makes PER_PEER shared claims (claim-plan.mjs:
 * directory globs, suffix globs, plain paths; none refused); the `none` owner holds no claim.
 *
 * 1. Claim check. `majordomus_check_paths` with 1, 10 and 100 paths from each owner's own stdio
 *    client (raw newline JSON-RPC over pipes, one in flight — the latency an agent sees), the two
 *    owners interleaved in rounds, alternating which goes first; every answer is checked against
 *    the in-process board (the number of claims it names for each path). Bar per size: p50 with
 *    1,000 claims ≤ 1.5 × p50 with none. Beside it, the check itself in-process: a ClaimBoard
 *    (src/coordination/claims.ts, benches/lib/internals.mjs) filled with the same claims, `check` of 100 paths timed
 *    (µs per path, and per path and pattern); and what a claim costs as the board fills.
 * 2. Messages. The `claims` owner's stdio `ping` and `majordomus_info` while the peers exchange
 *    RATE messages a second (each `majordomus_send_message` to another peer; the recipient's stream
 *    carries the notification) against no messages, alternating rounds on the same owner. Bar:
 *    messages/none p50 ≤ 1.15 for each call, only with a clean load (every send answered, every
 *    notification the owner delivered received, at least 95% of RATE). Reported beside it, the
 *    control: the `none` owner's same calls in the same rounds — the messages do not pass through
 *    it, so its ratio is what the traffic costs any process on this machine (the peers' process,
 *    the HTTP thread waking on two cores), and carrier/control is the owner's own share.
 *
 * Writes benches/results/coordination-latest.json. Environment: BENCH_COORD_PEERS (20),
 * BENCH_COORD_PER_PEER (50), BENCH_COORD_ROUNDS (6), BENCH_COORD_CALLS (100 checks of 1 path per
 * owner and round; 10 paths: 0.4 ×, 100 paths: 0.1 ×, at least 3), BENCH_COORD_STDIO_CALLS (2000
 * per call kind, condition and round), BENCH_COORD_RATE (100 messages/s).
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { checkPaths, claimPlan, clusteredPaths, patternCount } from './lib/claim-plan.mjs';
import { internal } from './lib/internals.mjs';
import {
  fmt,
  leaseToken,
  machine,
  makeRepo,
  PACKAGE_ROOT,
  PipeRpc,
  processCpu,
  runWhenMain,
  SERVING_RE,
  spawnNode,
  summarize,
  table,
  verdict,
  writeResult,
  knob,
} from './lib/common.mjs';

const PEERS = knob('BENCH_COORD_PEERS', 20, 6);
const PER_PEER = knob('BENCH_COORD_PER_PEER', 50, 20);
const ROUNDS = knob('BENCH_COORD_ROUNDS', 6, 2);
const CALLS = knob('BENCH_COORD_CALLS', 100, 20);
const STDIO_CALLS = knob('BENCH_COORD_STDIO_CALLS', 2000, 60);
const RATE = knob('BENCH_COORD_RATE', 100);
/**
 * The checks: 1, 10 and 100 paths spread over the board (claim-plan.mjs: each path meets other
 * claims, so 100 paths name 80-odd different claims), barred; and 100 paths in four claimed
 * directories, where the compact answer writes each of the four claims once (reported).
 */
const SIZES = ['1', '10', '100', '100 clustered'];
const BARRED = new Set(['1', '10', '100']);
const pathCount = (size) => Number.parseInt(size, 10);
const pathsFor = (size, claims) => (size.endsWith('clustered') ? clusteredPaths(pathCount(size)) : checkPaths(pathCount(size), claims));
const callsFor = (size) => Math.max(3, Math.round(CALLS * { 1: 1, 10: 0.4, 100: 0.1 }[pathCount(size)]));
const CHECK_BAR = 1.5;
const MESSAGE_BAR = 1.15;
const PEERS_JS = fileURLToPath(new URL('./lib/peers.mjs', import.meta.url));
const OWNER_ENV = { MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };
const STDIO_KINDS = {
  ping: ['ping', {}],
  info: ['tools/call', { name: 'majordomus_info', arguments: {} }],
};

async function startOwner(root, name) {
  const proc = spawnNode(['mcp', '--http-port', '0'], { cwd: root, env: OWNER_ENV });
  const rpc = new PipeRpc(proc);
  await rpc.initialize(name);
  const [, base] = await proc.waitStderr(SERVING_RE);
  return { proc, rpc, base, token: await leaseToken(root) };
}

async function peerCall(peers, method, params, ms = 60_000) {
  const { message } = await peers.request(method, params, ms);
  if (message.error) throw new Error(`peers ${method} failed: ${message.error.message}`);
  return message.result;
}

/** One stdio tools/call that must succeed: µs, bytes and the structured answer. */
async function timedTool(rpc, name, args) {
  const t0 = process.hrtime.bigint();
  const { message, bytes } = await rpc.request('tools/call', { name, arguments: args }, 120_000);
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`${name} failed: ${JSON.stringify(message).slice(0, 300)}`);
  return { micros, bytes, result: message.result.structuredContent };
}

async function timedStdio(rpc, kind) {
  const [method, params] = STDIO_KINDS[kind];
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request(method, params);
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`${kind} failed: ${JSON.stringify(message).slice(0, 300)}`);
  return micros;
}

/** The claims each checked path must be answered with (their count), from the in-process board. */
function expectedCounts(board, paths) {
  return board.check(paths).paths.map((p) => p.claims.length);
}

function checkAnswer(result, paths, expected, owner) {
  const counts = result.paths.map((p) => p.claims.length);
  const want = owner === 'none' ? paths.map(() => 0) : expected;
  // The compact answer: each path names claim ids, each claim is written out once in `claims`.
  const written = new Set((result.claims ?? []).map((c) => c.id));
  const named = new Set(result.paths.flatMap((p) => p.claims));
  const complete = named.size === written.size && [...named].every((id) => written.has(id));
  if (counts.length !== paths.length || counts.some((c, i) => c !== want[i]) || !complete || (result.claims ?? []).some((c) => !c.live)) {
    throw new Error(`check of ${paths.length} paths on the ${owner} owner answered ${JSON.stringify(counts)} claims per path (${written.size} written out, ${named.size} named), expected ${JSON.stringify(want)} (all live, each named claim written out once)`);
  }
}

/** The board in-process: fill time, then `check` of `paths` timed until `budgetMs` has passed. */
async function inProcess(plan, paths, budgetMs = 4_000) {
  const { ClaimBoard } = await internal('coordination/claims');
  const client = (peer) => ({ name: `bench-peer-${peer}`, version: '0.0.0' });
  const time = (board) => {
    for (let i = 0; i < 3; i += 1) board.check(paths);
    const each = [];
    const until = performance.now() + budgetMs;
    while (performance.now() < until || each.length < 5) {
      const t0 = performance.now();
      board.check(paths);
      each.push(performance.now() - t0);
    }
    return summarize(each);
  };
  const empty = new ClaimBoard({ root: PACKAGE_ROOT, isLive: () => true });
  const emptyMs = time(empty);
  const board = new ClaimBoard({ root: PACKAGE_ROOT, isLive: () => true });
  const claimMs = [];
  const fillStarted = performance.now();
  for (const entry of plan) {
    const t0 = performance.now();
    board.claim(`p${entry.peer + 2}`, client(entry.peer), { paths: entry.paths, intent: entry.intent, exclusive: false, ttl_seconds: 86_400, proceed: false });
    claimMs.push(performance.now() - t0);
  }
  const fillMs = performance.now() - fillStarted;
  const fullMs = time(board);
  const tenth = Math.max(1, Math.floor(claimMs.length / 10));
  return {
    board,
    empty_check_ms: emptyMs,
    check_ms: fullMs,
    fill_ms: +fillMs.toFixed(1),
    claim_first_tenth_ms: summarize(claimMs.slice(0, tenth)),
    claim_last_tenth_ms: summarize(claimMs.slice(-tenth)),
  };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const plan = claimPlan(PEERS, PER_PEER);
  const patterns = patternCount(plan);
  const repos = [];
  const procs = [];
  let peers = null;
  const checkSamples = Object.fromEntries(SIZES.map((s) => [s, { none: [], claims: [] }]));
  const checkBytes = Object.fromEntries(SIZES.map((s) => [s, { none: 0, claims: 0 }]));
  // carrier: the owner the messages go through; control: the other owner, on the same machine at the same time.
  const stdioSamples = Object.fromEntries(['carrier', 'control'].map((o) => [o, { none: { ping: [], info: [] }, messages: { ping: [], info: [] } }]));
  const perRound = [];
  const stretches = [];
  let filled;
  let local;
  const ownerCpu = { none: { cpu: 0, wall: 0 }, messages: { cpu: 0, wall: 0 } };
  try {
    // In-process first, with nothing else of ours running.
    const paths100 = checkPaths(100, plan.length);
    local = await inProcess(plan, paths100);
    const expected = Object.fromEntries(SIZES.map((s) => [s, expectedCounts(local.board, pathsFor(s, plan.length))]));

    const owners = {};
    for (const name of ['none', 'claims']) {
      const repo = await makeRepo({ rules: 5, documents: 5, prefix: `majordomus-bench-coord-${name}-` });
      repos.push(repo);
      owners[name] = await startOwner(repo.root, `bench-coord-${name}`);
      procs.push(owners[name].proc);
    }
    const peersProc = spawnNode([], { script: PEERS_JS, cwd: PACKAGE_ROOT });
    procs.push(peersProc);
    peers = new PipeRpc(peersProc);
    for (const name of ['none', 'claims']) await peerCall(peers, 'attach', { group: name, base: owners[name].base, token: owners[name].token, count: PEERS });
    filled = await peerCall(peers, 'claim', { group: 'claims', peers: PEERS, perPeer: PER_PEER }, 600_000);
    if (filled.claim_notices !== filled.warnings) throw new Error(`${filled.warnings} overlap warnings but ${filled.claim_notices} claim notices arrived`);
    const listed = (await timedTool(owners.claims.rpc, 'majordomus_claims', {})).result.claims;
    if (listed.length !== plan.length || listed.some((c) => !c.live)) throw new Error(`the claims owner lists ${listed.length} claims (${listed.filter((c) => c.live).length} live), expected ${plan.length} live`);
    process.stderr.write(`coordination bench: ${plan.length} claims (${patterns} patterns) from ${PEERS} peers in ${filled.seconds} s, ${filled.warnings} overlap warnings\n`);

    // 1. Claim check, interleaved.
    for (const size of SIZES) {
      const paths = pathsFor(size, plan.length);
      for (const owner of ['none', 'claims']) {
        // A round's worth each: the claims owner is still settling after the fill (its notices,
        // its journal), and its first checks ran slower than its later ones.
        for (let i = 0; i < callsFor(size); i += 1) {
          const { result, bytes } = await timedTool(owners[owner].rpc, 'majordomus_check_paths', { paths });
          checkAnswer(result, paths, expected[size], owner);
          checkBytes[size][owner] = bytes;
        }
      }
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      const row = { round: round + 1 };
      for (const size of SIZES) {
        const paths = pathsFor(size, plan.length);
        for (const owner of round % 2 === 0 ? ['none', 'claims'] : ['claims', 'none']) {
          const values = [];
          for (let i = 0; i < callsFor(size); i += 1) {
            const { micros, result } = await timedTool(owners[owner].rpc, 'majordomus_check_paths', { paths });
            if (i === 0) checkAnswer(result, paths, expected[size], owner);
            values.push(micros);
          }
          checkSamples[size][owner].push(...values);
          row[`${size}.${owner}`] = +summarize(values).p50.toFixed(0);
        }
      }
      perRound.push(row);
      process.stderr.write(`coordination bench: check round ${round + 1}/${ROUNDS} p50 µs ${SIZES.map((s) => `${s} path(s) none ${row[`${s}.none`]} claims ${row[`${s}.claims`]}`).join(' · ')}\n`);
    }

    // 2. The owners' stdio path with and without messages (alternating rounds); the messages go
    // through the claims owner (the carrier), the other owner is the control: what the same
    // traffic costs a process it does not pass through — the machine's share.
    const measured = { carrier: owners.claims, control: owners.none };
    const pid = owners.claims.proc.child.pid;
    for (let i = 0; i < 300; i += 1) for (const o of Object.keys(measured)) for (const kind of Object.keys(STDIO_KINDS)) await timedStdio(measured[o].rpc, kind);
    for (let round = 0; round < ROUNDS * 2; round += 1) {
      const condition = round % 2 === 0 ? 'none' : 'messages';
      if (condition === 'messages') await peerCall(peers, 'messages.start', { group: 'claims', rate: RATE });
      const cpu0 = processCpu(pid);
      const t0 = performance.now();
      const p50s = {};
      for (const o of Math.floor(round / 2) % 2 === 0 ? ['carrier', 'control'] : ['control', 'carrier']) {
        const values = { ping: [], info: [] };
        for (let i = 0; i < STDIO_CALLS; i += 1) for (const kind of Object.keys(STDIO_KINDS)) values[kind].push(await timedStdio(measured[o].rpc, kind));
        for (const kind of Object.keys(STDIO_KINDS)) stdioSamples[o][condition][kind].push(...values[kind]);
        p50s[o] = `ping ${fmt(summarize(values.ping).p50, 0)} info ${fmt(summarize(values.info).p50, 0)}`;
      }
      ownerCpu[condition].cpu += processCpu(pid) - cpu0;
      ownerCpu[condition].wall += (performance.now() - t0) / 1000;
      if (condition === 'messages') stretches.push(await peerCall(peers, 'messages.stop', { group: 'claims' }));
      process.stderr.write(`coordination bench: stdio round ${round + 1}/${ROUNDS * 2} (${condition}) p50 µs carrier ${p50s.carrier} · control ${p50s.control}${condition === 'messages' ? ` · ${stretches.at(-1).rate} msg/s, ${stretches.at(-1).received}/${stretches.at(-1).delivered} notices` : ''}\n`);
    }
    await peerCall(peers, 'close', { group: 'none' });
    await peerCall(peers, 'close', { group: 'claims' });
  } finally {
    for (const proc of procs) await proc.stop(10_000);
    for (const repo of repos) await repo.cleanup();
  }

  // Figures and bars.
  const check = {};
  const bars = {};
  for (const size of SIZES) {
    const none = summarize(checkSamples[size].none);
    const claims = summarize(checkSamples[size].claims);
    const p95 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(0.95 * values.length) - 1];
    check[size] = {
      none: { ...none, p95: p95(checkSamples[size].none) },
      claims: { ...claims, p95: p95(checkSamples[size].claims) },
      ratio_p50: +(claims.p50 / none.p50).toFixed(3),
      answer_bytes: checkBytes[size],
    };
    const label = `check ${size} path${size === '1' ? '' : 's'}: ${plan.length} claims / none p50`;
    if (BARRED.has(size)) bars[`${label} <= ${CHECK_BAR}`] = { value: check[size].ratio_p50, pass: check[size].ratio_p50 <= CHECK_BAR };
    else bars[`${label} (reported)`] = { value: check[size].ratio_p50, info: true };
  }
  const load = {
    stretches: stretches.length,
    issued: stretches.reduce((s, r) => s + r.issued, 0),
    sent: stretches.reduce((s, r) => s + r.sent, 0),
    failed: stretches.reduce((s, r) => s + r.failed, 0),
    delivered: stretches.reduce((s, r) => s + r.delivered, 0),
    received: stretches.reduce((s, r) => s + r.received, 0),
    seconds: +stretches.reduce((s, r) => s + r.seconds, 0).toFixed(2),
    min_rate: Math.min(...stretches.map((r) => r.rate)),
    first_error: stretches.find((r) => r.first_error)?.first_error ?? null,
    send_ms_p50: +summarize(stretches.map((r) => r.send_ms.p50)).p50.toFixed(2),
    notice_ms_p50: +summarize(stretches.map((r) => r.notice_ms.p50)).p50.toFixed(2),
    notice_ms_p99_max: +Math.max(...stretches.map((r) => r.notice_ms.p99)).toFixed(2),
  };
  load.rate = +(load.sent / load.seconds).toFixed(1);
  const loadClean = stretches.length > 0 && load.failed === 0 && load.sent === load.issued && load.received === load.delivered && load.delivered === load.sent && load.min_rate >= 0.95 * RATE;
  const stdio = {};
  for (const o of ['carrier', 'control']) {
    stdio[o] = {};
    for (const kind of Object.keys(STDIO_KINDS)) {
      const none = summarize(stdioSamples[o].none[kind]);
      const messages = summarize(stdioSamples[o].messages[kind]);
      stdio[o][kind] = { none, messages, ratio_p50: +(messages.p50 / none.p50).toFixed(3), ratio_p99: +(messages.p99 / none.p99).toFixed(3) };
    }
  }
  for (const kind of Object.keys(STDIO_KINDS)) {
    const ratio = stdio.carrier[kind].ratio_p50;
    bars[`stdio ${kind}: ${RATE} msg/s / none p50 <= ${MESSAGE_BAR} (clean load)`] = { value: ratio, pass: ratio <= MESSAGE_BAR && loadClean };
  }
  bars[`messages clean, every stretch >= ${0.95 * RATE} msg/s`] = { value: `${fmt(load.min_rate, 1)} msg/s, ${load.received}/${load.delivered} notices, ${load.failed} failed`, pass: loadClean };
  const cores = (c) => +(ownerCpu[c].cpu / ownerCpu[c].wall).toFixed(2);

  const local100 = {
    none_ms_p50: +local.empty_check_ms.p50.toFixed(3),
    claims_ms_p50: +local.check_ms.p50.toFixed(3),
    us_per_path: +((local.check_ms.p50 * 1000) / 100).toFixed(1),
    us_per_path_pattern: +((local.check_ms.p50 * 1000) / (100 * patterns)).toFixed(3),
    fill_ms: local.fill_ms,
    claim_ms_first_tenth_p50: +local.claim_first_tenth_ms.p50.toFixed(3),
    claim_ms_last_tenth_p50: +local.claim_last_tenth_ms.p50.toFixed(3),
  };
  const output = {
    name: 'coordination',
    started_at: startedAt,
    settings: { peers: PEERS, per_peer: PER_PEER, claims: plan.length, patterns, rounds: ROUNDS, checks_per_round: Object.fromEntries(SIZES.map((s) => [s, callsFor(s)])), stdio_calls: STDIO_CALLS, rate: RATE, peers_transport: '/mcp sessions with their GET streams, in one separate process' },
    machine_before: machineBefore,
    machine_after: machine(),
    fill: filled,
    check_us: check,
    check_in_process: local100,
    per_round_check_p50_us: perRound,
    stdio_us: stdio,
    messages: { ...load, clean: loadClean, owner_cores: { none: cores('none'), messages: cores('messages') }, stretches },
    bars,
  };
  const file = await writeResult('coordination', output);

  const checkRows = SIZES.map((size) => {
    const c = check[size];
    return [`${size}`, fmt(c.none.p50, 0), fmt(c.none.p95, 0), fmt(c.claims.p50, 0), fmt(c.claims.p95, 0), fmt(c.ratio_p50, 2), `${c.answer_bytes.none} / ${c.answer_bytes.claims}`, c.claims.n];
  });
  const stdioRows = ['carrier', 'control'].flatMap((o) =>
    Object.keys(STDIO_KINDS).map((kind) => {
      const s = stdio[o][kind];
      return [`${kind} ${o}`, fmt(s.none.p50, 0), fmt(s.none.p99, 0), fmt(s.messages.p50, 0), fmt(s.messages.p99, 0), fmt(s.ratio_p50, 3), s.none.n];
    }),
  );
  console.log(
    [
      `Coordination: ${plan.length} shared claims (${patterns} patterns) from ${PEERS} peers over /mcp, filled in ${filled.seconds} s (claim p50 ${fmt(filled.first_tenth_ms.p50, 1)} ms in the first tenth, ${fmt(filled.last_tenth_ms.p50, 1)} ms in the last; ${filled.warnings} overlap warnings, every one of them received as a claim notice by its holder); load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}`,
      table(['check paths', 'none p50 µs', 'none p95 µs', 'claims p50 µs', 'claims p95 µs', '× none p50', 'answer B none / claims', 'n'], checkRows),
      `in-process ClaimBoard.check of 100 paths: ${fmt(local100.none_ms_p50, 3)} ms with no claim, ${fmt(local100.claims_ms_p50, 3)} ms with ${plan.length} claims = ${local100.us_per_path} µs per path, ${local100.us_per_path_pattern} µs per path and pattern; filling the board took ${fmt(local100.fill_ms, 0)} ms (a claim ${local100.claim_ms_first_tenth_p50} ms in the first tenth, ${local100.claim_ms_last_tenth_p50} ms in the last)`,
      '',
      'carrier = the owner the messages go through (the bar) · control = the other owner, measured at the same time: what the traffic costs a process it does not pass through',
      table(['stdio call / owner', 'none p50 µs', 'none p99 µs', 'messages p50 µs', 'messages p99 µs', '× none p50', 'n'], stdioRows),
      `messages: ${load.rate} msg/s over ${load.stretches} stretches (slowest ${fmt(load.min_rate, 1)}), ${load.sent}/${load.issued} sent, ${load.failed} failed, ${load.received}/${load.delivered} notifications received; send p50 ${load.send_ms_p50} ms, send → notification p50 ${load.notice_ms_p50} ms (worst stretch p99 ${load.notice_ms_p99_max} ms); owner process ${cores('none')} cores without, ${cores('messages')} with`,
      '',
      table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, v.info ? 'info' : verdict(v.pass)])),
      `reported, no bar: control messages/none p50 ${Object.keys(STDIO_KINDS).map((k) => `${k} ${fmt(stdio.control[k].ratio_p50, 3)}`).join(' · ')}; the owner's own share, carrier ratio / control ratio: ${Object.keys(STDIO_KINDS).map((k) => `${k} ${fmt(stdio.carrier[k].ratio_p50 / stdio.control[k].ratio_p50, 3)}`).join(' · ')}`,
      `written ${file}`,
    ].join('\n'),
  );
  return { name: 'coordination', output, summaryRows: Object.entries(bars).map(([k, v]) => ['coordination', k, v.value, v.info ? 'info' : verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
