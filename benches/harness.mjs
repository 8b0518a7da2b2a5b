#!/usr/bin/env node
/**
 * The harness (issue 10): following a session through a bridge, the owner's own client while
 * agents chatter, and what a spawn costs. One temporary git repository whose layer nominates a
 * profile running tests/fixtures/harness/fake-agent.mjs as a claude CLI; an owner (`mcp
 * --http-port 0`) and a bridged client (a second `mcp` in the same checkout), both driven over raw
 * stdio pipes with newline JSON-RPC.
 *
 * 1. Follow latency. A `lines:N:interval` session prints ticks `{"type":"tick","at":…}` stamped
 *    with the agent's performance.timeOrigin + performance.now(); the bridged client follows it
 *    with `session_read {wait: true}` and a progressToken. For every `notifications/progress` it
 *    receives, latency = the bench's performance.timeOrigin + performance.now() when the chunk
 *    arrived − the tick's `at`. Both are wall-clock based (each process's time origin is the wall
 *    clock at its start, plus a monotonic clock), on the same machine. Bar: p50 ≤ 20 ms (hyprpilot
 *    polls every 250 ms). The same through the owner's own stdio is printed beside it.
 * 2. Invariant 3 under agent chatter. The owner's stdio `tools/call` (`majordomus_get` of a rule),
 *    sequential, with F sessions each printing R bytes/s (`flood:R:…`) against none, in
 *    alternating rounds (loaded, quiet | quiet, loaded | …: the flood starts once for two loaded
 *    measurements, as benches/shared.mjs does with its load). Bar: loaded/quiet p50 ≤ 1.15, when
 *    the flood carried at least 0.8 of its nominal bytes (else the bar fails: no load, no verdict).
 * 3. Spawn overhead. From just before the request is written to when the fake agent's script began
 *    (the `at` it logs to FAKE_AGENT_LOG), p50, for: `majordomus_spawn` over the owner's stdio; the
 *    harness's own `launch()` (setpriv + the `sh` group leader) in a worker thread at the harness
 *    thread's nice; the same in this thread at nice 0; `child_process.spawn` of setpriv running the
 *    agent; `child_process.spawn` of the fake agent. Interleaved in rotating order. Then the same
 *    with a light agent (a sh script that logs `date +%s.%N`), whose start-up does not drown the
 *    steps. Reported, no bar: the ratio, and what each step adds as the median of its per-round
 *    paired differences.
 *
 * Writes benches/results/harness-latest.json. Environment: BENCH_HARNESS_LINES (300),
 * BENCH_HARNESS_INTERVAL_MS (20), BENCH_HARNESS_ROUNDS (10), BENCH_HARNESS_CALLS (2000 per
 * condition and round), BENCH_HARNESS_WARMUP (1000), BENCH_HARNESS_FLOODS (8),
 * BENCH_HARNESS_FLOOD_RATE (1000000 bytes/s each), BENCH_HARNESS_FLOOD_MIN_SHARE (0.8),
 * BENCH_HARNESS_SPAWNS (31 per variant).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import {
  fmt,
  machine,
  makeRepo,
  makeTempDir,
  MAIN_JS,
  median,
  PACKAGE_ROOT,
  percentile,
  PipeRpc,
  runWhenMain,
  SERVING_RE,
  spawnNode,
  summarize,
  table,
  threadDelta,
  threadTimes,
  verdict,
  withTimeout,
  writeResult,
  knob,
} from './lib/common.mjs';
import { internal, internalUrl } from './lib/internals.mjs';

const LINES = knob('BENCH_HARNESS_LINES', 300, 30);
const INTERVAL_MS = knob('BENCH_HARNESS_INTERVAL_MS', 20);
const ROUNDS = knob('BENCH_HARNESS_ROUNDS', 10, 2);
const CALLS = knob('BENCH_HARNESS_CALLS', 2000, 150);
const WARMUP = knob('BENCH_HARNESS_WARMUP', 1000, 100);
const FLOODS = knob('BENCH_HARNESS_FLOODS', 8, 4);
const FLOOD_RATE = knob('BENCH_HARNESS_FLOOD_RATE', 1_000_000);
const SPAWNS = knob('BENCH_HARNESS_SPAWNS', 31, 3);

const FOLLOW_P50_BAR_MS = 20;
const CHATTER_BAR = 1.15;
/**
 * The chatter bar counts only when the flood was carried: at least this share of the transcript
 * bytes the agents were asked to print per second (the harness thread and the agents run at nice
 * 10, so a machine busy with other work slows them first).
 */
const FLOOD_MIN_SHARE = knob('BENCH_HARNESS_FLOOD_MIN_SHARE', 0.8);
/** Longer than any loaded stretch; every flood session is killed at the stretch's end. */
const FLOOD_SECONDS = 600;
/**
 * Transcript bytes every flood session must have written before a loaded stretch is measured:
 * about a second of its rate, so eight node processes starting up are behind us.
 */
const FLOOD_FLOWING_BYTES = Math.max(64 * 1024, FLOOD_RATE);
const NICE = Number(process.env.MAJORDOMUS_HTTP_NICE ?? 10);

const FAKE_AGENT = join(PACKAGE_ROOT, 'tests/fixtures/harness/fake-agent.mjs');
const PROFILE = 'bench-fake';
const RULE_URI = 'majordomus://rule/g00/rule-0';
const OWNER_ENV = { MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };

const LIGHT_PROFILE = 'bench-light';
const SPAWN_VARIANTS = ['harness', 'launch-nice', 'launch', 'setpriv', 'direct'];
const SPAWN_LABELS = {
  harness: 'majordomus_spawn over the owner stdio',
  'launch-nice': `launch() in a worker at nice ${NICE}: setpriv + sh`,
  launch: 'launch() in the bench thread, nice 0: setpriv + sh',
  setpriv: 'child_process.spawn(setpriv --pdeathsig USR1 -- agent)',
  direct: 'child_process.spawn(agent)',
};
/** What each step of a spawn adds: the later variant minus the earlier, paired by round. */
const SPAWN_STEPS = [
  ['setpriv', 'direct', 'setpriv (its exec before the agent)'],
  ['launch', 'setpriv', 'the sh group leader (its exec and fork)'],
  ['launch-nice', 'launch', `launching from a thread at nice ${NICE} (and the message that wakes it)`],
  ['harness', 'launch-nice', 'RPC to the harness thread + the table before launch()'],
  ['harness', 'direct', 'total'],
];

const now = () => performance.timeOrigin + performance.now();

function structured(message, what) {
  if (message.error || message.result?.isError) throw new Error(`${what} failed: ${JSON.stringify(message).slice(0, 400)}`);
  return message.result.structuredContent;
}

async function tool(rpc, name, args, ms = 60_000) {
  const { message } = await rpc.request('tools/call', { name, arguments: args }, ms);
  return structured(message, name);
}

function repoFiles(log, lightCommand, lightLog) {
  return {
    [`.ai/repo/profiles/${LIGHT_PROFILE}.yaml`]: [`id: ${LIGHT_PROFILE}`, 'agent: claude', `command: ${lightCommand}`, `env: {LIGHT_AGENT_LOG: ${JSON.stringify(lightLog)}}`, 'harness: {enabled: true}', ''].join('\n'),
    [`.ai/repo/profiles/${PROFILE}.yaml`]: [
      `id: ${PROFILE}`,
      'agent: claude',
      `command: ${FAKE_AGENT}`,
      `env: {FAKE_AGENT_VENDOR: claude, FAKE_AGENT_LOG: ${JSON.stringify(log)}}`,
      'harness: {enabled: true}',
      '',
    ].join('\n'),
    '.ai/repo/policy.yaml': `harness: {max_live_sessions: ${Math.max(9, FLOODS + 2)}, max_sessions: 64}\n`,
  };
}

async function loggedRecords(log) {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

async function loggedStart(log, prompt) {
  const record = (await loggedRecords(log)).find((r) => r.prompt === prompt);
  if (record === undefined || typeof record.at !== 'number') throw new Error(`the fake agent logged no start for ${JSON.stringify(prompt)}`);
  return record;
}

/** Stops a running session (`terminated` or `gone`) and reaps it with a second kill; a finished one is reaped at once. */
async function killAndReap(rpc, session) {
  const killed = await tool(rpc, 'majordomus_session_kill', { session }, 30_000);
  if (killed.action !== 'reaped') {
    const reaped = await tool(rpc, 'majordomus_session_kill', { session }, 30_000);
    if (reaped.action !== 'reaped') throw new Error(`session ${session} was not reaped: ${JSON.stringify(reaped)}`);
  }
  return killed.action;
}

// ---- 1. follow latency --------------------------------------------------------------------------

/**
 * Spawns a ticking session (from the owner) and follows it from `client` from its first line,
 * looping on nextCursor; every progress message's tick gives one latency sample.
 */
async function followLatency(owner, client, label) {
  const spawned = await tool(owner, 'majordomus_spawn', { profile: PROFILE, prompt: `lines:${LINES}:${INTERVAL_MS} answer:followed ${label}` });
  const token = `follow-${label}`;
  const samples = [];
  // The transcript line's own `at` (whole ms) minus the tick's: the agent → harness thread part, roughly.
  const agentToHarness = [];
  let progress = 0;
  let early = 0;
  let cursor = spawned.nextCursor;
  let requestedAt = now();
  const off = client.onNotification((message, receivedAt) => {
    if (message.method !== 'notifications/progress' || message.params?.progressToken !== token) return;
    progress += 1;
    const line = JSON.parse(message.params.message);
    if (line.event?.type !== 'tick') return;
    // A tick printed before the first read was sent was not being followed yet.
    if (line.event.at < requestedAt) {
      early += 1;
      return;
    }
    samples.push(receivedAt - line.event.at);
    agentToHarness.push(Date.parse(line.at) - line.event.at);
  });
  let reads = 0;
  let streamed = 0;
  try {
    while (cursor !== undefined) {
      reads += 1;
      if (reads === 1) requestedAt = now();
      const { message } = await client.request(
        'tools/call',
        { name: 'majordomus_session_read', arguments: { session: spawned.session, wait: true, cursor, timeout_seconds: 600 }, _meta: { progressToken: token } },
        LINES * INTERVAL_MS + 60_000,
      );
      const read = structured(message, 'session_read');
      streamed += read.lines.length;
      cursor = read.nextCursor;
    }
  } finally {
    off();
  }
  const status = await tool(owner, 'majordomus_session_status', { session: spawned.session });
  await killAndReap(owner, spawned.session);
  const ticks = samples.length + early;
  return {
    label,
    latency_ms: { ...summarize(samples), p95: percentile([...samples].sort((a, b) => a - b), 95) },
    transcript_at_minus_tick_ms: summarize(agentToHarness),
    ticks_received: ticks,
    ticks_expected: LINES,
    ticks_before_follow: early,
    progress_notifications: progress,
    lines_in_results: streamed,
    reads,
    turn_status: status.status,
    clean: ticks === LINES && progress === streamed && status.status === 'exited' && status.exitCode === 0,
  };
}

// ---- 2. the owner's stdio under agent chatter -----------------------------------------------------

async function getCall(rpc) {
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request('tools/call', { name: 'majordomus_get', arguments: { uri: RULE_URI } });
  const micros = Number(process.hrtime.bigint() - t0) / 1000;
  if (message.error || message.result?.isError) throw new Error(`majordomus_get failed: ${JSON.stringify(message).slice(0, 300)}`);
  return micros;
}

/** CPU seconds of every process in these process groups (the agents and their `sh` leaders). */
function groupsCpu(pgids) {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (pgids.has(Number(fields[2]))) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

/** The flood sessions, started and stopped between conditions (like shared.mjs's load switch). */
function floodSwitch(rpc, ownerPid) {
  const stretches = [];
  const ownerCpu = {};
  let running = null;
  const transcriptBytes = async (sessions) => {
    let sum = 0;
    const each = [];
    for (const s of sessions) {
      const status = await tool(rpc, 'majordomus_session_status', { session: s.session });
      if (status.status !== 'running') throw new Error(`flood session ${s.session} is ${status.status} (exit ${status.exitCode})`);
      each.push(status.transcriptBytes);
      sum += status.transcriptBytes;
    }
    return { sum, each };
  };
  return {
    stretches,
    ownerCpu,
    async on() {
      if (running) return;
      const sessions = [];
      for (let i = 0; i < FLOODS; i++) {
        const spawned = await tool(rpc, 'majordomus_spawn', { profile: PROFILE, prompt: `flood:${FLOOD_RATE}:${FLOOD_SECONDS} answer:flood ${stretches.length} ${i}` });
        sessions.push({ session: spawned.session, pid: spawned.sessionInfo.pid });
      }
      // Measured only once every session streams (condition wait, bounded).
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { each } = await transcriptBytes(sessions);
        if (each.every((b) => b >= FLOOD_FLOWING_BYTES)) break;
        if (Date.now() > deadline) throw new Error(`the flood sessions did not start streaming within 60 s (transcript bytes ${each.join(', ')})`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const pgids = new Set(sessions.map((s) => s.pid));
      running = { sessions, pgids, bytes: (await transcriptBytes(sessions)).sum, threads: threadTimes(ownerPid), agentsCpu: groupsCpu(pgids), t0: Date.now() };
    },
    async off() {
      if (!running) return;
      const { sessions, pgids, bytes, threads, agentsCpu, t0 } = running;
      running = null;
      const after = (await transcriptBytes(sessions)).sum;
      const wall = (Date.now() - t0) / 1000;
      const threadsAfter = threadTimes(ownerPid);
      const agentsCores = (groupsCpu(pgids) - agentsCpu) / wall;
      for (const [tid, a] of Object.entries(threadsAfter)) {
        ownerCpu[tid] ??= { comm: a.comm, nice: a.nice, cpu_s: 0 };
        ownerCpu[tid].cpu_s += a.cpu_s - (threads[tid]?.cpu_s ?? 0);
      }
      const actions = [];
      for (const s of sessions) actions.push(await killAndReap(rpc, s.session));
      const stretch = { seconds: +wall.toFixed(2), transcript_mb_per_s: +((after - bytes) / wall / 1e6).toFixed(2), agents_cores: +agentsCores.toFixed(2), kills: actions };
      stretches.push(stretch);
      process.stderr.write(`harness bench: flood stretch ${stretches.length}: ${stretch.transcript_mb_per_s} MB/s of transcript over ${stretch.seconds} s, agents ${stretch.agents_cores} cores\n`);
    },
    async kill() {
      if (!running) return;
      for (const s of running.sessions) await tool(rpc, 'majordomus_session_kill', { session: s.session }, 30_000).catch(() => undefined);
      running = null;
    },
  };
}

// ---- 3. spawn overhead ----------------------------------------------------------------------------

/** No single spawn run may take longer (they take a fraction of a second). */
const RUN_TIMEOUT_MS = 30_000;

/** Drains a child's pipes; resolves with its exit code once they closed (bounded). */
function drained(child) {
  child.stdout.resume();
  child.stderr.resume();
  return withTimeout(
    new Promise((done, fail) => {
      child.once('error', fail);
      child.once('close', (code) => done(code));
    }),
    RUN_TIMEOUT_MS,
    `process ${child.pid} to end`,
  );
}

/** A worker thread at the harness thread's nice that runs the harness's own launch(). */
async function launchWorker() {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const { launch } = await import(workerData.processJs);
      const { yieldToMainThread } = await import(workerData.priorityJs);
      yieldToMainThread(workerData.nice);
      parentPort.on('message', async (request) => {
        try {
          const { child, pid } = await launch(request);
          const launchedAt = performance.timeOrigin + performance.now();
          parentPort.postMessage({ launched: pid });
          child.stdout.resume();
          child.stderr.resume();
          const code = await new Promise((done, fail) => {
            child.once('error', fail);
            child.once('close', done);
          });
          parentPort.postMessage({ code, launchedAt });
        } catch (error) {
          parentPort.postMessage({ error: String(error) });
        }
      });
      parentPort.postMessage({ ready: true });
    })();
  `;
  // The harness's own modules, bundled from the sources (benches/lib/internals.mjs).
  const [processJs, priorityJs] = await Promise.all([internalUrl('harness/process'), internalUrl('platform/priority')]);
  const worker = new Worker(source, { eval: true, workerData: { processJs, priorityJs, nice: NICE } });
  let pending = null;
  let failure = null;
  const fail = (error) => {
    failure ??= error;
    pending?.fail(error);
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the launch worker exited (${code})`)));
  let launchedPid = null;
  worker.on('message', (reply) => {
    if (reply.ready) return pending?.done(reply);
    if (reply.launched !== undefined) return void (launchedPid = reply.launched);
    if (reply.error) return pending?.fail(new Error(reply.error));
    pending?.done(reply);
  });
  const next = () =>
    new Promise((done, reject) => {
      if (failure) return reject(failure);
      pending = { done, fail: reject };
    }).finally(() => (pending = null));
  const ready = next();
  return {
    ready,
    async run(request) {
      launchedPid = null;
      const reply = next();
      worker.postMessage(request);
      try {
        return await withTimeout(reply, RUN_TIMEOUT_MS, 'the launch worker');
      } catch (error) {
        throw new Error(`${error.message} (the group leader ${launchedPid === null ? 'was never launched' : `${launchedPid} was launched`})`);
      }
    },
    stop: () => {
      worker.removeAllListeners('exit');
      return worker.terminate();
    },
  };
}

/**
 * A stand-in agent with no runtime to boot: a shell script that notes the wall clock (`date
 * +%s.%N`) as it starts, reads its prompt from stdin, logs both and prints a claude result event.
 * With it the steps of a spawn are not drowned by node's own start-up (±50 ms on this machine).
 */
const LIGHT_AGENT = [
  '#!/bin/sh',
  'at=$(date +%s.%N)',
  'prompt=$(cat)',
  'printf \'{"at_s":"%s","prompt":"%s"}\\n\' "$at" "$prompt" >> "$LIGHT_AGENT_LOG"',
  'printf \'%s\\n\' \'{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"00000000-0000-4000-8000-000000000000"}\'',
  '',
].join('\n');

/** The start the light agent logged for `prompt` (wall-clock ms). */
async function lightStart(log, prompt) {
  const record = (await loggedRecords(log)).find((r) => r.prompt === prompt);
  const at = Number(record?.at_s) * 1000;
  if (!Number.isFinite(at)) throw new Error(`the light agent logged no start for ${JSON.stringify(prompt)}`);
  return at;
}

/**
 * Each variant of `agent` (`{name, profile, command, env, startOf(prompt)}`) SPAWNS times,
 * interleaved in a rotating order (reversed every other round), after one unmeasured run of each.
 * Per variant, in round order (so rounds pair): from just before the request to the agent's
 * script running, and until the caller had its child (the spawn answered, launch() resolved,
 * the 'spawn' event).
 */
async function spawnOverhead(rpc, root, agent, args, worker) {
  const { launch } = await internal('harness/process');
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path)) ?? null;
  const { command, env } = agent;
  const spawnChild = (file, argv, prompt) => {
    const t0 = now();
    const child = spawn(file, argv, { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const spawned = new Promise((done) => child.once('spawn', done));
    child.stdin.on('error', () => undefined);
    child.stdin.end(prompt);
    return { t0, child, spawned };
  };
  const runs = {
    async harness(prompt) {
      const t0 = now();
      const spawned = await tool(rpc, 'majordomus_spawn', { profile: agent.profile, prompt });
      const returned = now() - t0;
      // Until the turn ends (the read follows it), then reap it.
      let cursor = spawned.nextCursor;
      while (cursor !== undefined) cursor = (await tool(rpc, 'majordomus_session_read', { session: spawned.session, wait: true, cursor, timeout_seconds: 60 }, 70_000)).nextCursor;
      const status = await tool(rpc, 'majordomus_session_status', { session: spawned.session });
      await killAndReap(rpc, spawned.session);
      if (status.exitCode !== 0) throw new Error(`spawned session ${spawned.session} ended ${status.status} ${status.exitCode}`);
      return { t0, returned };
    },
    async 'launch-nice'(prompt) {
      const t0 = now();
      const { code, launchedAt } = await worker.run({ command, args, cwd: root, env, stdin: prompt });
      if (code !== 0) throw new Error(`launch() in the worker: ${agent.name} exited ${code}`);
      return { t0, returned: launchedAt - t0 };
    },
    async launch(prompt) {
      const t0 = now();
      const { child } = await launch({ command, args, cwd: root, env, stdin: prompt });
      const returned = now() - t0;
      const code = await drained(child);
      if (code !== 0) throw new Error(`launch(): ${agent.name} exited ${code}`);
      return { t0, returned };
    },
    async setpriv(prompt) {
      const { t0, child, spawned } = spawnChild(setpriv, ['--pdeathsig', 'USR1', '--', command, ...args], prompt);
      const closed = drained(child);
      await spawned;
      const returned = now() - t0;
      const code = await closed;
      if (code !== 0) throw new Error(`setpriv: ${agent.name} exited ${code}`);
      return { t0, returned };
    },
    async direct(prompt) {
      const { t0, child, spawned } = spawnChild(command, args, prompt);
      const closed = drained(child);
      await spawned;
      const returned = now() - t0;
      const code = await closed;
      if (code !== 0) throw new Error(`child_process.spawn: ${agent.name} exited ${code}`);
      return { t0, returned };
    },
  };
  const variants = SPAWN_VARIANTS.filter((v) => v !== 'setpriv' || setpriv !== null);
  const samples = Object.fromEntries(variants.map((v) => [v, []]));
  const returned = Object.fromEntries(variants.map((v) => [v, []]));
  for (const variant of variants) await runs[variant](`bench spawn ${agent.name} ${variant} warm-up answer:ok`);
  for (let i = 0; i < SPAWNS; i++) {
    const rotated = variants.map((_, k) => variants[(k + i) % variants.length]);
    const order = i % 2 === 0 ? rotated : rotated.reverse();
    for (const variant of order) {
      const prompt = `bench spawn ${agent.name} ${variant} ${i} answer:ok`;
      const run = await runs[variant](prompt);
      samples[variant].push((await agent.startOf(prompt)) - run.t0);
      returned[variant].push(run.returned);
    }
  }
  return { variants, samples, returned };
}

/** The spawn overhead with the fake agent (the figure), then with the light agent (the steps). */
async function spawnRuns(rpc, root, log, light) {
  const worker = await launchWorker();
  try {
    await withTimeout(worker.ready, 30_000, 'the launch worker');
    // The argv the harness gives a claude profile, as the fake agent logged it (a warm-up spawn).
    const warm = await tool(rpc, 'majordomus_spawn', { profile: PROFILE, prompt: 'bench spawn warm-up', wait: true, timeout_seconds: 60 });
    await killAndReap(rpc, warm.session);
    const args = (await loggedStart(log, 'bench spawn warm-up')).argv;
    const env = { ...process.env, MAJORDOMUS_SPAWN_DEPTH: '1' };
    delete env.MAJORDOMUS_LOG;
    const fake = await spawnOverhead(rpc, root, { name: 'fake', profile: PROFILE, command: FAKE_AGENT, env: { ...env, FAKE_AGENT_VENDOR: 'claude', FAKE_AGENT_LOG: log }, startOf: async (prompt) => (await loggedStart(log, prompt)).at }, args, worker);
    process.stderr.write(`harness bench: spawn (fake agent) p50 ${fake.variants.map((v) => `${v} ${fmt(summarize(fake.samples[v]).p50, 1)} ms`).join(' · ')}\n`);
    const shell = await spawnOverhead(rpc, root, { name: 'light', profile: LIGHT_PROFILE, command: light.command, env: { ...env, LIGHT_AGENT_LOG: light.log }, startOf: (prompt) => lightStart(light.log, prompt) }, args, worker);
    process.stderr.write(`harness bench: spawn (light agent) p50 ${shell.variants.map((v) => `${v} ${fmt(summarize(shell.samples[v]).p50, 1)} ms`).join(' · ')}\n`);
    return { fake, light: shell, argv: args };
  } finally {
    await worker.stop();
  }
}

// ---- the run --------------------------------------------------------------------------------------

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  let repo = null;
  const procs = [];
  let flood = null;
  let follow;
  let spawnRun;
  const chatter = { quiet: [], loaded: [] };
  const perRound = [];
  // The agents' logs and the light agent, outside the checkout (never in the layer).
  const scratch = await makeTempDir('majordomus-bench-harness-agents-');
  const log = join(scratch.path, 'fake-agent.jsonl');
  const light = { command: join(scratch.path, 'light-agent.sh'), log: join(scratch.path, 'light-agent.jsonl') };
  try {
    await writeFile(light.command, LIGHT_AGENT, { mode: 0o755 });
    repo = await makeRepo({ rules: 20, documents: 30, prefix: 'majordomus-bench-harness-', extra: repoFiles(log, light.command, light.log) });

    const ownerProc = spawnNode(['mcp', '--http-port', '0'], { cwd: repo.root, env: OWNER_ENV });
    procs.push(ownerProc);
    const owner = new PipeRpc(ownerProc);
    await owner.initialize('bench-harness-owner');
    await ownerProc.waitStderr(SERVING_RE);
    const bridgeProc = spawnNode(['mcp'], { cwd: repo.root });
    procs.push(bridgeProc);
    const bridge = new PipeRpc(bridgeProc);
    await bridge.initialize('bench-harness-bridge');
    if (/serving http/.test(bridgeProc.stderr())) throw new Error(`the second mcp became a server instead of bridging:\n${bridgeProc.stderr()}`);
    const profiles = await tool(owner, 'majordomus_list_profiles', {});
    for (const id of [PROFILE, LIGHT_PROFILE]) {
      const profile = profiles.profiles.find((p) => p.id === id);
      if (profile === undefined || profile.error !== undefined) throw new Error(`the bench profile ${id} is not available: ${JSON.stringify(profiles)}`);
    }

    // 1. Follow: through the bridge (barred), then through the owner's own stdio (beside).
    const bridged = await followLatency(owner, bridge, 'bridged');
    process.stderr.write(`harness bench: follow through the bridge p50 ${fmt(bridged.latency_ms.p50)} ms (${bridged.ticks_received}/${LINES} ticks)\n`);
    const direct = await followLatency(owner, owner, 'owner');
    process.stderr.write(`harness bench: follow on the owner's stdio p50 ${fmt(direct.latency_ms.p50)} ms\n`);
    follow = { bridged, owner: direct };

    // 3. Spawn overhead (before the flood, so its files do not weigh on it).
    spawnRun = await spawnRuns(owner, repo.root, log, light);

    // 2. The owner's stdio with and without the flood.
    flood = floodSwitch(owner, ownerProc.child.pid);
    for (let i = 0; i < WARMUP; i++) await getCall(owner);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['loaded', 'quiet'] : ['quiet', 'loaded'];
      const row = { round: round + 1, order: order.join(',') };
      for (const condition of order) {
        if (condition === 'loaded') await flood.on();
        else await flood.off();
        const values = [];
        for (let i = 0; i < CALLS; i++) values.push(await getCall(owner));
        chatter[condition].push(...values);
        row[`${condition}.p50`] = +summarize(values).p50.toFixed(1);
      }
      row.ratio = +(row['loaded.p50'] / row['quiet.p50']).toFixed(3);
      perRound.push(row);
      process.stderr.write(`harness bench: round ${round + 1}/${ROUNDS} (${row.order}) p50 µs quiet ${row['quiet.p50']} loaded ${row['loaded.p50']} (×${row.ratio})\n`);
    }
    await flood.off();
    if (await tool(owner, 'majordomus_session_list', {}).then((l) => l.sessions.some((s) => s.status === 'running'))) throw new Error('a session was still running at the end');
  } finally {
    await flood?.kill();
    for (const proc of procs.reverse()) await proc.stop(15_000);
    await repo?.cleanup();
    await scratch.cleanup();
  }

  // ---- figures and bars
  const quiet = summarize(chatter.quiet);
  const loaded = summarize(chatter.loaded);
  const chatterRatio = loaded.p50 / quiet.p50;
  const stretches = flood.stretches;
  const floodWall = stretches.reduce((s, r) => s + r.seconds, 0);
  const floodTotals = {
    stretches: stretches.length,
    seconds: +floodWall.toFixed(1),
    transcript_mb_per_s: +(stretches.reduce((s, r) => s + r.transcript_mb_per_s * r.seconds, 0) / floodWall).toFixed(2),
    min_stretch_mb_per_s: Math.min(...stretches.map((r) => r.transcript_mb_per_s)),
    agents_cores: +(stretches.reduce((s, r) => s + r.agents_cores * r.seconds, 0) / floodWall).toFixed(2),
  };
  // The flood is judged against what was asked: a transcript line is its stdout line plus ~5 %.
  const nominalMbPerSecond = (FLOODS * FLOOD_RATE) / 1e6;
  floodTotals.share_of_nominal = +(floodTotals.transcript_mb_per_s / nominalMbPerSecond).toFixed(2);
  const floodCarried = floodTotals.share_of_nominal >= FLOOD_MIN_SHARE;
  const ownerThreads = threadDelta({}, flood.ownerCpu, floodWall);
  // Per agent: each variant's figures, and each step as the median of its per-round differences
  // (the variants of a round ran back to back, so a slow patch of the machine cancels out).
  const spawnFigures = (run) => {
    const toScript = Object.fromEntries(run.variants.map((v) => [v, summarize(run.samples[v])]));
    const callerHasIt = Object.fromEntries(run.variants.map((v) => [v, summarize(run.returned[v])]));
    const steps = SPAWN_STEPS.filter(([a, b]) => run.variants.includes(a) && run.variants.includes(b)).map(([a, b, what]) => ({
      step: `${what} (${a} − ${b})`,
      ms: median(run.samples[a].map((x, i) => x - run.samples[b][i])),
    }));
    return { variants: run.variants, to_script_ms: toScript, until_caller_has_child_ms: callerHasIt, ratio_harness_direct_p50: toScript.harness.p50 / toScript.direct.p50, steps_median_paired_ms: steps, samples_ms: run.samples };
  };
  const spawnFake = spawnFigures(spawnRun.fake);
  const spawnLight = spawnFigures(spawnRun.light);
  const p50 = (v) => spawnFake.to_script_ms[v].p50;
  const spawnRatio = spawnFake.ratio_harness_direct_p50;

  const bars = {
    [`follow through a bridge: p50 <= ${FOLLOW_P50_BAR_MS} ms (every tick received)`]: { value: +follow.bridged.latency_ms.p50.toFixed(2), pass: follow.bridged.latency_ms.p50 <= FOLLOW_P50_BAR_MS && follow.bridged.clean },
    [`owner stdio under ${FLOODS} × ${FLOOD_RATE / 1e6} MB/s agents: loaded/quiet p50 <= ${CHATTER_BAR} (flood >= ${FLOOD_MIN_SHARE} of nominal)`]: { value: +chatterRatio.toFixed(3), pass: chatterRatio <= CHATTER_BAR && floodCarried },
  };
  const output = {
    name: 'harness',
    started_at: startedAt,
    settings: { lines: LINES, interval_ms: INTERVAL_MS, rounds: ROUNDS, calls: CALLS, warmup: WARMUP, floods: FLOODS, flood_rate: FLOOD_RATE, spawns: SPAWNS, nice: NICE, clocks: 'wall clock: performance.timeOrigin + performance.now() in each process, same machine' },
    machine_before: machineBefore,
    machine_after: machine(),
    follow,
    chatter: {
      quiet_us: quiet,
      loaded_us: loaded,
      ratio_p50: +chatterRatio.toFixed(3),
      median_round_ratio_p50: +median(perRound.map((r) => r.ratio)).toFixed(3),
      ratio_p99: +(loaded.p99 / quiet.p99).toFixed(3),
      per_round: perRound,
      flood: { ...floodTotals, nominal_mb_per_s: nominalMbPerSecond, carried: floodCarried, stretches },
      owner_threads_under_flood: ownerThreads,
    },
    spawn: { fake_agent: spawnFake, light_agent: spawnLight, argv: spawnRun.argv },
    bars,
  };
  const file = await writeResult('harness', output);

  const followRow = (label, f) => [label, f.latency_ms.n, fmt(f.latency_ms.p50), fmt(f.latency_ms.p95), fmt(f.latency_ms.p99), fmt(f.latency_ms.max), fmt(f.latency_ms.min)];
  const chatterRow = (label, s) => [label, s.n, fmt(s.p50, 0), fmt(s.p90, 0), fmt(s.p99, 0)];
  const m = output.machine_after;
  const lines = [
    `Harness (load avg before ${machineBefore.loadavg['1m']}, after ${m.loadavg['1m']}; ${machineBefore.cpus} CPUs; clocks: performance.timeOrigin + performance.now() of each process, wall-clock based, same machine)`,
    '',
    `1. Follow latency: ${LINES} ticks every ${INTERVAL_MS} ms; bench receive time − the tick's "at" (ms)`,
    table(['follower', 'n', 'p50', 'p95', 'p99', 'max', 'min'], [followRow('bridged stdio client (relay of /mcp SSE)', follow.bridged), followRow("owner's own stdio", follow.owner)]),
    `ticks received: bridged ${follow.bridged.ticks_received}/${LINES} (${follow.bridged.ticks_before_follow} before the follow began) · owner ${follow.owner.ticks_received}/${LINES}`,
    '',
    `2. Owner stdio majordomus_get, ${ROUNDS} alternating rounds × ${CALLS} calls: quiet vs ${FLOODS} sessions × flood:${FLOOD_RATE} (µs)`,
    table(['condition', 'n', 'p50', 'p90', 'p99'], [chatterRow('quiet (no session)', quiet), chatterRow(`loaded (${FLOODS} flooding sessions)`, loaded)]),
    `per-round loaded/quiet p50: ${perRound.map((r) => fmt(r.ratio, 2)).join(' · ')} · median ${fmt(output.chatter.median_round_ratio_p50, 3)} · over all rounds ${fmt(chatterRatio, 3)} (p99 ${fmt(loaded.p99 / quiet.p99, 2)})`,
    `flood: ${floodTotals.transcript_mb_per_s} MB/s of transcript written on average over ${floodTotals.seconds} s (${floodTotals.share_of_nominal} of the nominal ${nominalMbPerSecond} MB/s; slowest stretch ${floodTotals.min_stretch_mb_per_s}); agents ${floodTotals.agents_cores} cores`,
    `owner threads under the flood: ${Object.entries(ownerThreads).filter(([k]) => k !== 'busiest').map(([k, v]) => `${k} ×${v.threads}: ${v.cores} cores`).join('; ')}; busiest: ${ownerThreads.busiest.slice(0, 5).map((t) => `${t.comm === 'main thread' ? 'main' : `tid ${t.tid}`} nice ${t.nice} ${t.cores}`).join(', ')}`,
    '',
    `3. Spawn → the agent's script running (ms), ${SPAWNS} runs per variant, interleaved; "caller has it": the spawn answered / launch() resolved / the 'spawn' event`,
    ...[['fake-agent.mjs (node)', spawnFake], ['light agent (sh script)', spawnLight]].flatMap(([agent, f]) => [
      table(
        [`${agent}: variant`, 'p50', 'p90', 'min', 'max', 'caller has it p50'],
        f.variants.map((v) => [SPAWN_LABELS[v], fmt(f.to_script_ms[v].p50, 1), fmt(f.to_script_ms[v].p90, 1), fmt(f.to_script_ms[v].min, 1), fmt(f.to_script_ms[v].max, 1), fmt(f.until_caller_has_child_ms[v].p50, 1)]),
      ),
      `harness/direct p50 ${fmt(f.ratio_harness_direct_p50, 3)}; steps (median of per-round differences): ${f.steps_median_paired_ms.map((x) => `${x.step} ${fmt(x.ms, 1)} ms`).join(' · ')}`,
    ]),
    '',
    table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
    `written ${file}`,
  ];
  console.log(lines.join('\n'));
  const summaryRows = [
    ...Object.entries(bars).map(([k, v]) => ['harness', k, v.value, verdict(v.pass)]),
    ['harness', 'follow through a bridge: p95 / max ms', `${fmt(follow.bridged.latency_ms.p95)} / ${fmt(follow.bridged.latency_ms.max)}`, 'reported'],
    ['harness', `flood carried (share of ${nominalMbPerSecond} MB/s)`, floodTotals.share_of_nominal, 'reported'],
    ['harness', 'spawn → fake agent running p50 ms: majordomus_spawn / child_process.spawn', `${fmt(p50('harness'), 1)} / ${fmt(p50('direct'), 1)} = ${fmt(spawnRatio, 3)}`, 'reported'],
    ['harness', 'spawn → light agent running p50 ms: majordomus_spawn − child_process.spawn', fmt(spawnLight.to_script_ms.harness.p50 - spawnLight.to_script_ms.direct.p50, 1), 'reported'],
  ];
  return { name: 'harness', output, summaryRows };
}

runWhenMain(import.meta.url, main);
