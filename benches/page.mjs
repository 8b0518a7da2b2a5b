#!/usr/bin/env node
/**
 * The live page under a busy board (issue 13), measured in one run.
 *
 * One owner (`mcp --http-port 0` in a temporary git repository, its own stdio client timed as in
 * the coordination bench) with PEERS − 1 more peers attached over `/mcp` (benches/lib/peers.mjs, a
 * process of its own: an MCP session per peer with its stream open, as a bridge attaches), so the
 * board holds PEERS peers. Debian's chromium (playwright-core) holds the live page open with the
 * lease's token, as `majordomus open` gives it.
 *
 * Rounds alternate: `none` (the page open, nobody writes) and `busy` (the peers send RATE messages
 * a second, each to another peer; every message changes the board the page shows). In each round
 * the owner's stdio client times `ping` and `majordomus_info`, at least STDIO_CALLS of each and for at
 * least STRETCH_MS.
 *
 * 1. Update latency: for each message, from the moment the server stamped it (its `at`) to the
 *    moment the browser received the `/live` frame that carries it (a wrapper around the page's
 *    WebSocket records each frame's arrival; the page renders a frame in the same task). Same
 *    machine, same clock. Bar: p50 ≤ 100 ms, and every message sent reached the page.
 * 2. The owner's stdio p50 busy / none ≤ 1.15 for each call, with a clean load (every send
 *    answered, at least 95 % of RATE).
 *
 * Writes benches/results/page-latest.json. Environment: BENCH_PAGE_PEERS (50), BENCH_PAGE_RATE
 * (10 messages/s), BENCH_PAGE_ROUNDS (4 of each), BENCH_PAGE_STDIO_CALLS (1500 per call kind and
 * round, at least), BENCH_PAGE_STRETCH_MS (8000, each round at least).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { fmt, leaseToken, machine, makeRepo, PACKAGE_ROOT, PipeRpc, runWhenMain, SERVING_RE, spawnNode, summarize, table, verdict, withTimeout, writeResult, knob } from './lib/common.mjs';

const PEERS = knob('BENCH_PAGE_PEERS', 50, 10);
const RATE = knob('BENCH_PAGE_RATE', 10);
const ROUNDS = knob('BENCH_PAGE_ROUNDS', 4, 2);
const STDIO_CALLS = knob('BENCH_PAGE_STDIO_CALLS', 1500, 200);
const STRETCH_MS = knob('BENCH_PAGE_STRETCH_MS', 8000, 1500);
const LATENCY_BAR_MS = 100;
const STDIO_BAR = 1.15;
const CHROMIUM = '/usr/bin/chromium';
const PEERS_JS = fileURLToPath(new URL('./lib/peers.mjs', import.meta.url));
const OWNER_ENV = { MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };
const STDIO_KINDS = {
  ping: ['ping', {}],
  info: ['tools/call', { name: 'majordomus_info', arguments: {} }],
};

/**
 * Runs in the page before its own script: every frame the page's WebSocket receives is looked at
 * first, and each message it carries is remembered with the time its first frame arrived.
 */
function recordFrames() {
  const seen = new Map();
  window.__benchSeen = seen;
  window.__benchFrames = 0;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const arrived = Date.now();
        window.__benchFrames += 1;
        let frame;
        try {
          frame = JSON.parse(event.data);
        } catch {
          return;
        }
        for (const message of frame.host?.messages ?? []) {
          if (!seen.has(message.id)) seen.set(message.id, { at: Date.parse(message.at), arrived });
        }
      });
    }
  };
}

async function timedStdio(rpc, kind) {
  const [method, params] = STDIO_KINDS[kind];
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request(method, params);
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`${kind} failed: ${JSON.stringify(message).slice(0, 300)}`);
  return micros;
}

async function peerCall(peers, method, params, ms = 60_000) {
  const { message } = await peers.request(method, params, ms);
  if (message.error) throw new Error(`peers ${method} failed: ${message.error.message}`);
  return message.result;
}

export async function main() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the page bench drives Debian's chromium (apt-get install chromium)`);
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const samples = { none: { ping: [], info: [] }, busy: { ping: [], info: [] } };
  const latencies = [];
  const stretches = [];
  let missing = 0;
  let frames = 0;
  const repo = await makeRepo({ rules: 20, documents: 30, prefix: 'majordomus-bench-page-' });
  const procs = [];
  let browser = null;
  try {
    const owner = spawnNode(['mcp', '--http-port', '0'], { cwd: repo.root, env: OWNER_ENV });
    procs.push(owner);
    const rpc = new PipeRpc(owner);
    await rpc.initialize('bench-page-owner');
    const [, base] = await owner.waitStderr(SERVING_RE);
    const token = await leaseToken(repo.root);
    const peersProc = spawnNode([], { script: PEERS_JS, cwd: PACKAGE_ROOT });
    procs.push(peersProc);
    const peers = new PipeRpc(peersProc);
    await peerCall(peers, 'attach', { group: 'board', base, token, count: PEERS - 1 }, 300_000);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = await browser.newPage();
    await page.addInitScript(recordFrames);
    await page.goto(`${base}/#token=${token}`);
    // The whole state arrived: every peer is on the page.
    await withTimeout(page.waitForFunction((n) => document.querySelectorAll('#peer-list > li').length >= n, PEERS, { timeout: 120_000 }), 130_000, 'the page listing every peer');
    process.stderr.write(`page bench: ${PEERS} peers on the page\n`);

    for (let i = 0; i < 300; i += 1) for (const kind of Object.keys(STDIO_KINDS)) await timedStdio(rpc, kind);
    for (let round = 0; round < ROUNDS * 2; round += 1) {
      const condition = round % 2 === 0 ? 'none' : 'busy';
      if (condition === 'busy') await peerCall(peers, 'messages.start', { group: 'board', rate: RATE });
      const values = { ping: [], info: [] };
      // At least STDIO_CALLS of each and at least STRETCH_MS long, so each busy stretch carries many messages.
      const until = performance.now() + STRETCH_MS;
      for (let i = 0; i < STDIO_CALLS || performance.now() < until; i += 1) for (const kind of Object.keys(STDIO_KINDS)) values[kind].push(await timedStdio(rpc, kind));
      // One by one: a stretch on a fast machine holds more calls than a spread's arguments may.
      for (const kind of Object.keys(STDIO_KINDS)) for (const value of values[kind]) samples[condition][kind].push(value);
      let note = '';
      if (condition === 'busy') {
        const stretch = await peerCall(peers, 'messages.stop', { group: 'board' });
        stretches.push(stretch);
        note = ` · ${stretch.rate} msg/s, ${stretch.sent} sent`;
      }
      process.stderr.write(`page bench: round ${round + 1}/${ROUNDS * 2} (${condition}) stdio p50 µs ping ${fmt(summarize(values.ping).p50, 0)} info ${fmt(summarize(values.info).p50, 0)}${note}\n`);
    }
    // Every message sent has reached the page (or the bench says how many did not, bounded wait).
    const sent = stretches.reduce((s, r) => s + r.sent, 0);
    await page.waitForFunction((n) => window.__benchSeen.size >= n, sent, { timeout: 30_000 }).catch(() => undefined);
    const seen = await page.evaluate(() => ({ entries: [...window.__benchSeen.values()], frames: window.__benchFrames }));
    for (const entry of seen.entries) latencies.push(entry.arrived - entry.at);
    missing = Math.max(0, sent - seen.entries.length);
    frames = seen.frames;
    await peerCall(peers, 'close', { group: 'board' });
  } finally {
    await browser?.close().catch(() => undefined);
    for (const proc of procs) await proc.stop(10_000);
    await repo.cleanup();
  }

  const load = {
    stretches: stretches.length,
    issued: stretches.reduce((s, r) => s + r.issued, 0),
    sent: stretches.reduce((s, r) => s + r.sent, 0),
    failed: stretches.reduce((s, r) => s + r.failed, 0),
    min_rate: Math.min(...stretches.map((r) => r.rate)),
  };
  const loadClean = load.stretches > 0 && load.failed === 0 && load.sent === load.issued && load.min_rate >= 0.95 * RATE;
  const latency = summarize(latencies);
  const stdio = {};
  const bars = {};
  bars[`update reaches the browser p50 <= ${LATENCY_BAR_MS} ms (every message seen)`] = {
    value: `${fmt(latency.p50, 1)} ms (p99 ${fmt(latency.p99, 1)}, ${latencies.length}/${load.sent} seen)`,
    pass: latency.p50 <= LATENCY_BAR_MS && missing === 0,
  };
  for (const kind of Object.keys(STDIO_KINDS)) {
    const none = summarize(samples.none[kind]);
    const busy = summarize(samples.busy[kind]);
    stdio[kind] = { none, busy, ratio_p50: +(busy.p50 / none.p50).toFixed(3) };
    bars[`stdio ${kind}: busy / none p50 <= ${STDIO_BAR} (clean load)`] = { value: stdio[kind].ratio_p50, pass: stdio[kind].ratio_p50 <= STDIO_BAR && loadClean };
  }
  const output = {
    name: 'page',
    started_at: startedAt,
    settings: { peers: PEERS, rate: RATE, rounds: ROUNDS, stdio_calls: STDIO_CALLS, stretch_ms: STRETCH_MS, browser: CHROMIUM },
    machine_before: machineBefore,
    machine_after: machine(),
    latency_ms: latency,
    frames,
    missing,
    load: { ...load, clean: loadClean },
    stdio_us: stdio,
    bars,
  };
  const file = await writeResult('page', output);
  const rows = Object.keys(STDIO_KINDS).map((kind) => {
    const s = stdio[kind];
    return [kind, fmt(s.none.p50, 0), fmt(s.none.p99, 0), fmt(s.busy.p50, 0), fmt(s.busy.p99, 0), fmt(s.ratio_p50, 3), s.none.n];
  });
  console.log(
    [
      `Page: ${PEERS} peers, ${RATE} msg/s, the page open in chromium; load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}`,
      `message stamped → frame in the browser: p50 ${fmt(latency.p50, 1)} ms, p90 ${fmt(latency.p90 ?? latency.p99, 1)} ms, p99 ${fmt(latency.p99, 1)} ms over ${latencies.length} messages (${missing} not seen); ${frames} frames`,
      table(['stdio call', 'none p50 µs', 'none p99 µs', 'busy p50 µs', 'busy p99 µs', '× none p50', 'n'], rows),
      `load: ${load.sent}/${load.issued} sent, ${load.failed} failed, slowest stretch ${fmt(load.min_rate, 1)} msg/s`,
      '',
      table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
      `written ${file}`,
    ].join('\n'),
  );
  return { name: 'page', output, summaryRows: Object.entries(bars).map(([k, v]) => ['page', k, v.value, verdict(v.pass)]) };
}

runWhenMain(import.meta.url, main);
