#!/usr/bin/env node
/**
 * The shared board (issue 24): what sharing costs the agent that asks, measured in one run.
 *
 * Five servers, each the owner of its checkout with its own stdio client (raw newline JSON-RPC
 * over pipes, one call in flight — the latency an agent sees):
 * - `local`: a checkout that shares nothing (`MAJORDOMUS_BOARD=checkout`);
 * - `worktree` and its sibling `worktree-2`: two worktrees of one repository (the ledger in git's
 *   common directory);
 * - `fed-a` and `fed-b`: two clones of one repository federated through a real nats-server
 *   (JetStream, a temporary store, a loopback port).
 *
 * 1. Claim grant: `majordomus_claim` of a fresh path, exclusive, from `local`, `worktree` and
 *    `fed-a`, interleaved in rounds (the order rotating); p50 and p99 each, and the ratios to
 *    local measured in the same run. Reported, no bar: a federated grant is one broker round trip
 *    by design.
 * 2. Messages a second across two checkouts: `fed-b` sends to `fed-a`'s agent by name
 *    (`p1@<checkout>`), 16 in flight, for a few seconds; counted where they arrive (notifications
 *    on fed-a's stdout), with send → notification latency. The same between the two worktrees.
 * 3. The owner's stdio while federated (invariant 3): `fed-a`'s `ping` and `majordomus_info`
 *    while `fed-b` grants and releases claims at BENCH_FED_TRAFFIC_RATE events a second (ledger
 *    traffic fed-a applies) against rounds with no traffic; `local`, which shares nothing, measured
 *    in the same rounds as the control (the traffic's processes load the machine for everyone). Bar:
 *    fed-a's traffic/idle p50 over the control's ≤ 1.15 — what federation costs the owner itself.
 *
 * Writes benches/results/federation-latest.json. Environment: BENCH_FED_ROUNDS (5),
 * BENCH_FED_GRANTS (60 per owner and round), BENCH_FED_STDIO_CALLS (500 per kind, condition and
 * round), BENCH_FED_MESSAGE_SECONDS (3), BENCH_FED_TRAFFIC_RATE (100 ledger events a second).
 */
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fmt, machine, makeRepo, makeTempDir, PipeRpc, runWhenMain, SERVING_RE, spawnNode, summarize, table, track, verdict, withTimeout, writeResult } from './lib/common.mjs';

const execFileAsync = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_FED_ROUNDS ?? 5);
const GRANTS = Number(process.env.BENCH_FED_GRANTS ?? 60);
const STDIO_CALLS = Number(process.env.BENCH_FED_STDIO_CALLS ?? 500);
const MESSAGE_SECONDS = Number(process.env.BENCH_FED_MESSAGE_SECONDS ?? 3);
const TRAFFIC_RATE = Number(process.env.BENCH_FED_TRAFFIC_RATE ?? 100);
const IN_FLIGHT = 16;
const STDIO_BAR = 1.15;
const NATS_SERVER = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
/** Rate limits out of the way: the bench measures the board, not the token bucket. */
const OWNER_ENV = { MAJORDOMUS_MESSAGE_RATE: '1000000', MAJORDOMUS_MESSAGE_BURST: '1000000', MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startNats() {
  const store = await makeTempDir('majordomus-bench-nats-');
  const port = await freePort();
  const child = track(spawn(NATS_SERVER, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store.path], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (log += chunk));
  await withTimeout(
    new Promise((resolve, reject) => {
      const check = setInterval(() => {
        if (/Server is ready/.test(log)) resolve(clearInterval(check));
        if (child.exitCode !== null) reject(new Error(`nats-server exited: ${log}`));
      }, 20);
    }),
    20_000,
    'nats-server',
  );
  return { url: `nats://127.0.0.1:${port}`, stop: async () => (child.kill('SIGKILL'), await store.cleanup()) };
}

async function startOwner(root, name, env = {}) {
  const proc = spawnNode(['mcp', '--http-port', '0'], { cwd: root, env: { ...OWNER_ENV, ...env } });
  const rpc = new PipeRpc(proc);
  await rpc.initialize(name);
  await proc.waitStderr(SERVING_RE);
  return { name, proc, rpc };
}

async function tool(rpc, name, args, ms = 60_000) {
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request('tools/call', { name, arguments: args }, ms);
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`${name} failed: ${JSON.stringify(message).slice(0, 400)}`);
  return { micros, result: message.result.structuredContent };
}

async function otherLabel(owner) {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const { result } = await tool(owner.rpc, 'majordomus_peers', {});
    const other = result.peers.find((p) => p.id.startsWith('p1@'));
    if (other) return other.id.slice('p1@'.length);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${owner.name} never saw the other checkout's peer`);
}

/** Messages from `from` to `to`'s agent for `seconds`, IN_FLIGHT at once; counted where they arrive. */
async function messageRun(from, to, label, seconds) {
  const sentAt = new Map();
  const latencies = [];
  let received = 0;
  const off = to.rpc.onNotification((message, at) => {
    const body = message.params?.message?.body ?? '';
    const started = sentAt.get(body);
    if (message.method !== 'notifications/majordomus/message' || started === undefined) return;
    received += 1;
    latencies.push(at - started);
  });
  let sent = 0;
  const until = Date.now() + seconds * 1000;
  const sendLane = async (lane) => {
    for (let i = 0; Date.now() < until; i += 1) {
      const body = `bench ${lane}.${i}`;
      sentAt.set(body, performance.timeOrigin + performance.now());
      await tool(from.rpc, 'majordomus_send_message', { to: [`p1@${label}`], body });
      sent += 1;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, lane) => sendLane(lane)));
  const sendSeconds = (Date.now() - started) / 1000;
  const deadline = Date.now() + 20_000;
  while (received < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const deliveredSeconds = (Date.now() - started) / 1000;
  off();
  return { sent, received, per_second: +(received / deliveredSeconds).toFixed(1), send_seconds: +sendSeconds.toFixed(2), latency_ms: summarize(latencies) };
}

async function stdioCalls(owner, kind, n) {
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const t0 = process.hrtime.bigint();
    const { message } = kind === 'ping' ? await owner.rpc.request('ping', {}) : await owner.rpc.request('tools/call', { name: 'majordomus_info', arguments: {} });
    if (message.error || message.result?.isError) throw new Error(`${kind} failed`);
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return out;
}

/** Claims and releases from `owner` at TRAFFIC_RATE events a second until `stop()`: ledger traffic for the others. */
function ledgerTraffic(owner) {
  let running = true;
  let count = 0;
  const started = Date.now();
  const done = (async () => {
    for (let i = 0; running; i += 1) {
      await tool(owner.rpc, 'majordomus_claim', { paths: [`traffic/${i}`], intent: 'traffic', ttl_seconds: 600 });
      await tool(owner.rpc, 'majordomus_release_claims', {});
      count += 2;
      const due = started + (count / TRAFFIC_RATE) * 1000;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
  })();
  return { stop: async () => ((running = false), await done, count) };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const cleanups = [];
  const owners = [];
  try {
    const nats = await startNats();
    cleanups.push(nats.stop);
    const local = await makeRepo({ prefix: 'majordomus-bench-local-' });
    const wt = await makeRepo({ prefix: 'majordomus-bench-wt-' });
    const fed = await makeRepo({ prefix: 'majordomus-bench-fed-' });
    cleanups.push(local.cleanup, wt.cleanup, fed.cleanup);
    const side = await makeTempDir('majordomus-bench-side-');
    cleanups.push(side.cleanup);
    const wt2 = join(side.path, 'wt2');
    await execFileAsync('git', ['worktree', 'add', '-q', '-b', 'bench-2', wt2], { cwd: wt.root });
    const clone = join(side.path, 'clone');
    await execFileAsync('git', ['clone', '-q', fed.root, clone]);
    const fedEnv = { MAJORDOMUS_FEDERATION_URL: nats.url };
    const L = await startOwner(local.root, 'local', { MAJORDOMUS_BOARD: 'checkout' });
    const W = await startOwner(wt.root, 'worktree');
    const W2 = await startOwner(wt2, 'worktree-2');
    const FA = await startOwner(fed.root, 'fed-a', fedEnv);
    const FB = await startOwner(clone, 'fed-b', fedEnv);
    owners.push(L, W, W2, FA, FB);
    const labelW = await otherLabel(W2);
    await otherLabel(W);
    const labelA = await otherLabel(FB);
    await otherLabel(FA);

    // 1. Claim grants, interleaved.
    const grants = { local: [], worktree: [], federated: [] };
    const order = [['local', L], ['worktree', W], ['federated', FA]];
    let n = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const rotated = [...order.slice(round % 3), ...order.slice(0, round % 3)];
      for (let i = 0; i < GRANTS; i += 1) {
        for (const [name, owner] of rotated) {
          const { micros } = await tool(owner.rpc, 'majordomus_claim', { paths: [`grants/${n++}`], intent: 'bench', ttl_seconds: 3600 });
          grants[name].push(micros);
        }
      }
    }
    for (const owner of [L, W, FA]) await tool(owner.rpc, 'majordomus_release_claims', {});
    const grant = Object.fromEntries(Object.entries(grants).map(([k, v]) => [k, summarize(v)]));

    // 2. Messages a second across two checkouts.
    const messages = {
      federated: await messageRun(FB, FA, labelA, MESSAGE_SECONDS),
      worktrees: await messageRun(W2, W, labelW, MESSAGE_SECONDS),
    };

    // 3. The owner's stdio while federated.
    const stdio = { ping: { idle: [], traffic: [], local_idle: [], local_traffic: [] }, info: { idle: [], traffic: [], local_idle: [], local_traffic: [] } };
    let ledgerEvents = 0;
    let trafficSeconds = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const conditions = round % 2 === 0 ? ['idle', 'traffic'] : ['traffic', 'idle'];
      for (const condition of conditions) {
        const traffic = condition === 'traffic' ? ledgerTraffic(FB) : null;
        const t0 = Date.now();
        for (const kind of ['ping', 'info']) {
          stdio[kind][condition].push(...(await stdioCalls(FA, kind, STDIO_CALLS)));
          stdio[kind][`local_${condition}`].push(...(await stdioCalls(L, kind, Math.ceil(STDIO_CALLS / 2))));
        }
        if (traffic) {
          ledgerEvents += await traffic.stop();
          trafficSeconds += (Date.now() - t0) / 1000;
        }
      }
    }
    const stdioSummary = Object.fromEntries(
      Object.entries(stdio).map(([kind, c]) => {
        const s = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, summarize(v)]));
        return [kind, { ...s, ratio_p50: +(s.traffic.p50 / s.idle.p50).toFixed(3), control_ratio_p50: +(s.local_traffic.p50 / s.local_idle.p50).toFixed(3) }];
      }),
    );
    const ledgerRate = +(ledgerEvents / (trafficSeconds || 1)).toFixed(1);

    const bars = {};
    for (const kind of ['ping', 'info']) {
      // What the federation costs fed-a itself: its slowdown beyond what the same traffic costs a process it does not reach.
      const own = +(stdioSummary[kind].ratio_p50 / stdioSummary[kind].control_ratio_p50).toFixed(3);
      stdioSummary[kind].own_share_p50 = own;
      bars[`fed-a stdio ${kind}: (traffic/idle) / control's (traffic/idle) p50 <= ${STDIO_BAR}`] = { value: own, pass: own <= STDIO_BAR };
    }
    bars['messages across the broker: every one received'] = { value: `${messages.federated.received}/${messages.federated.sent}`, pass: messages.federated.received === messages.federated.sent };
    bars['messages across worktrees: every one received'] = { value: `${messages.worktrees.received}/${messages.worktrees.sent}`, pass: messages.worktrees.received === messages.worktrees.sent };

    const output = {
      name: 'federation',
      started_at: startedAt,
      settings: { rounds: ROUNDS, grants_per_round: GRANTS, stdio_calls: STDIO_CALLS, message_seconds: MESSAGE_SECONDS, in_flight: IN_FLIGHT, broker: 'nats-server (Debian), JetStream, loopback, file store' },
      machine_before: machineBefore,
      machine_after: machine(),
      grant_us: grant,
      grant_ratio_p50: { worktree: +(grant.worktree.p50 / grant.local.p50).toFixed(2), federated: +(grant.federated.p50 / grant.local.p50).toFixed(2) },
      grant_ratio_p99: { worktree: +(grant.worktree.p99 / grant.local.p99).toFixed(2), federated: +(grant.federated.p99 / grant.local.p99).toFixed(2) },
      messages,
      stdio_us: stdioSummary,
      ledger_traffic_events_per_second: ledgerRate,
      bars,
    };
    const file = await writeResult('federation', output);
    const grantRows = Object.entries(grant).map(([k, s]) => [k, fmt(s.p50 / 1000, 2), fmt(s.p99 / 1000, 2), k === 'local' ? '1.00' : fmt(s.p50 / grant.local.p50, 2), k === 'local' ? '1.00' : fmt(s.p99 / grant.local.p99, 2), s.n]);
    const messageRows = Object.entries(messages).map(([k, m]) => [k, m.per_second, `${m.received}/${m.sent}`, fmt(m.latency_ms.p50, 1), fmt(m.latency_ms.p99, 1)]);
    const stdioRows = Object.entries(stdioSummary).map(([kind, s]) => [kind, fmt(s.idle.p50, 0), fmt(s.traffic.p50, 0), fmt(s.idle.p99, 0), fmt(s.traffic.p99, 0), fmt(s.ratio_p50, 3), fmt(s.control_ratio_p50, 3), fmt(s.own_share_p50, 3)]);
    console.log(
      [
        `Shared board: load avg before ${machineBefore.loadavg['1m']} / ${machineBefore.loadavg['5m']}, after ${output.machine_after.loadavg['1m']} / ${output.machine_after.loadavg['5m']} (${machineBefore.cpus} CPUs)`,
        table(['claim grant', 'p50 ms', 'p99 ms', '× local p50', '× local p99', 'n'], grantRows),
        table(['messages across two checkouts', 'received / s', 'received / sent', 'send → notice p50 ms', 'p99 ms'], messageRows),
        `fed-a's own stdio while fed-b drives ${ledgerRate} ledger events/s (claims and releases fed-a applies); local = control owner in the same rounds`,
        table(['stdio call', 'idle p50 µs', 'traffic p50 µs', 'idle p99 µs', 'traffic p99 µs', '× idle p50', 'control × p50', 'own share'], stdioRows),
        '',
        table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
        `written ${file}`,
      ].join('\n'),
    );
    return {
      name: 'federation',
      output,
      summaryRows: [
        ['federation', 'grant p50 federated / local (no bar)', output.grant_ratio_p50.federated, 'INFO'],
        ['federation', 'grant p50 worktree / local (no bar)', output.grant_ratio_p50.worktree, 'INFO'],
        ...Object.entries(bars).map(([k, v]) => ['federation', k, v.value, verdict(v.pass)]),
      ],
    };
  } finally {
    for (const owner of owners.reverse()) await owner.proc.stop().catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

runWhenMain(import.meta.url, main);
