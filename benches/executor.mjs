#!/usr/bin/env node
/**
 * The executor and its gateway (issue 11), ratios measured in one run. One temporary git
 * repository (a generated layer, the executor profile, `.ai/local/executor.yaml` pointing at a lean
 * chat-completions server on loopback, benches/lib/chat-server.mjs); an owner (`mcp --http-port 0`)
 * driven over raw stdio.
 *
 * 1. Gateway overhead. Streaming chat completions (STREAM_CHUNKS content chunks each) through the
 *    gateway (`POST <server>/v1/chat/completions`, the lease's token) against straight to the
 *    chat server. a) time to first byte, sequential, the two interleaved, after the throughput
 *    rounds (a warm gateway): bar p50(gateway) −
 *    p50(direct) ≤ 0.5 ms; b) throughput with CONCURRENCY streams in flight: completed streams
 *    per second, the two alternating round by round; bar the median of the rounds' ratios
 *    gateway/direct ≥ 0.3 (issue 23; the goal, 0.5, is printed beside). The old bar, 0.9, asked a
 *    proxy on the same two cores as its client and its upstream to cost nearly nothing:
 *    docs/PERFORMANCE.md, "The gateway", says why it cannot.
 * 2. Delegation. The fixture task (read a file, edit it, run its test with bash, answer) through
 *    `run_task {wait}` and one `check_task`: the bytes the orchestrator received (the two JSON-RPC
 *    answers; progress notifications are left out, an orchestrator may not ask for them) against
 *    the bytes the executor exchanged with the model (request and response bodies at the chat
 *    server). Printed, no bar.
 * 3. Invariant 3 with executors running. The owner's stdio `majordomus_get`, sequential, with
 *    EXECUTORS tasks running (each a model that keeps calling read_file) against none, alternating
 *    rounds. Bar: loaded/quiet p50 ≤ 1.15.
 *
 * Writes benches/results/executor-latest.json. Environment: BENCH_EXECUTOR_TTFB (300 each),
 * BENCH_EXECUTOR_CONCURRENCY (16), BENCH_EXECUTOR_STREAMS (2000 per round: a round of a few seconds,
 * not a fraction of one, on a machine whose load moves), BENCH_EXECUTOR_ROUNDS
 * (6), BENCH_EXECUTOR_CALLS (1000 per condition and round), BENCH_EXECUTOR_EXECUTORS (4).
 */
import { Agent, request as httpRequest } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fmt, leaseToken, machine, makeRepo, PipeRpc, runWhenMain, SERVING_RE, spawnNode, summarize, table, verdict, writeResult, knob } from './lib/common.mjs';
import { startChatServer } from './lib/chat-server.mjs';

const TTFB_N = knob('BENCH_EXECUTOR_TTFB', 300, 60);
const CONCURRENCY = knob('BENCH_EXECUTOR_CONCURRENCY', 16);
const STREAMS = knob('BENCH_EXECUTOR_STREAMS', 2000, 300);
const ROUNDS = knob('BENCH_EXECUTOR_ROUNDS', 6, 2);
const CALLS = knob('BENCH_EXECUTOR_CALLS', 1000, 100);
const EXECUTORS = knob('BENCH_EXECUTOR_EXECUTORS', 4, 2);
const STREAM_CHUNKS = 32;
const RULE_URI = 'majordomus://rule/g00/rule-0';
const OWNER_ENV = { MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) };
const CALC = 'export function add(a, b) {\n  return a - b;\n}\n';
const CALC_TEST = "import assert from 'node:assert/strict';\nimport { add } from './calc.mjs';\nassert.equal(add(2, 3), 5);\nconsole.log('calc tests pass');\n";

/** What the chat server answers, by the task text of the conversation (or a plain stream). */
function scriptedReply(body) {
  const task = body.messages?.find((m) => m.role === 'user')?.content ?? '';
  if (typeof task === 'string' && task.startsWith('BENCH-CHURN')) {
    const turns = body.messages.filter((m) => m.role === 'assistant').length;
    return { tool: { name: 'read_file', input: { path: 'calc.mjs', offset: (turns % 3) + 1 } } };
  }
  if (typeof task === 'string' && task.startsWith('BENCH-FIX')) {
    const done = body.messages.filter((m) => m.role === 'tool').length;
    if (done === 0) return { tool: { name: 'read_file', input: { path: 'calc.mjs' } } };
    if (done === 1) return { tool: { name: 'edit_file', input: { path: 'calc.mjs', old_string: 'return a - b;', new_string: 'return a + b;' } } };
    if (done === 2) return { tool: { name: 'bash', input: { command: 'node calc.test.mjs' } } };
    return { text: 'Fixed add(): it subtracted. node calc.test.mjs passes now.' };
  }
  return { text: 'chunk ', chunks: STREAM_CHUNKS };
}

function post(url, token, body, agent) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let firstByte = null;
    const payload = JSON.stringify(body);
    const req = httpRequest(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
      res.on('data', () => {
        firstByte ??= process.hrtime.bigint();
      });
      res.on('end', () => (res.statusCode === 200 ? resolve({ ttfbMs: Number(firstByte - started) / 1e6 }) : reject(new Error(`HTTP ${res.statusCode} from ${url}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const STREAM_BODY = { messages: [{ role: 'user', content: 'stream please' }], stream: true };

async function ttfb(paths) {
  const samples = { gateway: [], direct: [] };
  for (let i = 0; i < TTFB_N; i += 1) {
    const order = i % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway'];
    for (const side of order) samples[side].push((await post(paths[side].url, paths[side].token, STREAM_BODY, paths[side].agent)).ttfbMs);
  }
  return { gateway: summarize(samples.gateway), direct: summarize(samples.direct) };
}

async function throughputRound(path) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < STREAMS) {
        next += 1;
        await post(path.url, path.token, STREAM_BODY, path.agent);
      }
    }),
  );
  return STREAMS / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function tool(rpc, name, args, ms = 300_000) {
  const { message, bytes } = await rpc.request('tools/call', { name, arguments: args }, ms);
  if (message.error || message.result?.isError) throw new Error(`${name} failed: ${JSON.stringify(message).slice(0, 400)}`);
  return { result: message.result.structuredContent, bytes };
}

async function getCall(rpc) {
  const t0 = process.hrtime.bigint();
  const { message } = await rpc.request('tools/call', { name: 'majordomus_get', arguments: { uri: RULE_URI } });
  if (message.error || message.result?.isError) throw new Error(`majordomus_get failed: ${JSON.stringify(message).slice(0, 300)}`);
  return Number(process.hrtime.bigint() - t0) / 1000;
}

async function getRound(rpc) {
  const micros = [];
  for (let i = 0; i < CALLS; i += 1) micros.push(await getCall(rpc));
  return summarize(micros).p50;
}

export async function main() {
  const startedAt = new Date().toISOString();
  const chat = await startChatServer(scriptedReply);
  let repo = null;
  let ownerProc = null;
  try {
    repo = await makeRepo({
      prefix: 'majordomus-bench-executor-',
      extra: {
        '.ai/repo/profiles/executor.yaml': 'id: executor\nagent: executor\nharness: {enabled: true}\n',
        '.ai/repo/policy.yaml': `harness: {max_live_sessions: ${EXECUTORS + 2}, max_sessions: 64}\n`,
        'calc.mjs': CALC,
        'calc.test.mjs': CALC_TEST,
      },
    });
    await mkdir(join(repo.root, '.ai/local'), { recursive: true });
    await writeFile(
      join(repo.root, '.ai/local/executor.yaml'),
      `providers:\n  bench: {base_url: ${chat.url}/v1, models: [bench-model], max_concurrent: ${CONCURRENCY * 2}, max_queue: 256}\nrouting: {priority_models: [{model: bench-model}]}\n`,
    );
    ownerProc = spawnNode(['mcp', '--http-port', '0'], { cwd: repo.root, env: OWNER_ENV });
    const owner = new PipeRpc(ownerProc);
    await owner.initialize('bench-executor-owner');
    const [, base] = await ownerProc.waitStderr(SERVING_RE);
    const token = await leaseToken(repo.root);
    const agentOptions = { keepAlive: true, maxSockets: CONCURRENCY };
    const paths = {
      gateway: { url: `${base}/v1/chat/completions`, token, agent: new Agent(agentOptions) },
      direct: { url: `${chat.url}/v1/chat/completions`, token: null, agent: new Agent(agentOptions) },
    };

    // 1. Gateway overhead.
    for (let i = 0; i < 50; i += 1) for (const side of ['gateway', 'direct']) await post(paths[side].url, paths[side].token, STREAM_BODY, paths[side].agent);
    const rates = { gateway: [], direct: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const side of round % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway']) rates[side].push(await throughputRound(paths[side]));
    }
    // After the throughput rounds: the time to first byte of a warm gateway (fifty requests left
    // its code unoptimised and its first-byte path slower than it runs from then on).
    const first = await ttfb(paths);
    const addedTtfb = first.gateway.p50 - first.direct.p50;
    // Each round's two runs saw the same machine: the median of their ratios.
    const throughputRatio = summarize(rates.gateway.map((rate, round) => rate / rates.direct[round])).p50;

    // 2. Delegation bytes.
    const before = { ...chat.stats };
    const ran = await tool(owner, 'run_task', { task: 'BENCH-FIX: fix add() in calc.mjs so calc.test.mjs passes; run it.', wait: true, timeout_seconds: 300 });
    if (ran.result.status !== 'completed') throw new Error(`the fixture task ended ${ran.result.status}: ${ran.result.error ?? ''}`);
    const checked = await tool(owner, 'check_task', { task_id: ran.result.task_id });
    const orchestratorBytes = ran.bytes + checked.bytes;
    const modelBytes = chat.stats.bytesIn - before.bytesIn + (chat.stats.bytesOut - before.bytesOut);

    // 3. Invariant 3 with executors churning.
    const quiet = [];
    const loaded = [];
    for (let i = 0; i < 200; i += 1) await getCall(owner);
    for (let round = 0; round < ROUNDS; round += 1) {
      quiet.push(await getRound(owner));
      const tasks = [];
      for (let e = 0; e < EXECUTORS; e += 1) tasks.push((await tool(owner, 'run_task', { task: `BENCH-CHURN ${round}/${e}`, max_turns: 10_000 })).result.task_id);
      loaded.push(await getRound(owner));
      for (const id of tasks) await tool(owner, 'cancel_task', { task_id: id });
    }
    const loadRatio = summarize(loaded).p50 / summarize(quiet).p50;

    const rows = [
      ['executor', 'gateway TTFB added p50 (ms) ≤ 0.5', `${fmt(addedTtfb, 3)} (${fmt(first.gateway.p50, 3)} − ${fmt(first.direct.p50, 3)})`, verdict(addedTtfb <= 0.5)],
      ['executor', `gateway throughput ×direct at ${CONCURRENCY} streams ≥ 0.3 (goal 0.5; median of rounds)`, `${fmt(throughputRatio, 3)} (${fmt(summarize(rates.gateway).p50, 0)} / ${fmt(summarize(rates.direct).p50, 0)} streams/s)`, verdict(throughputRatio >= 0.3)],
      ['executor', 'delegation: model bytes / orchestrator bytes', fmt(modelBytes / orchestratorBytes, 1), 'info'],
      ['executor', `owner stdio p50 with ${EXECUTORS} executors / none ≤ 1.15`, fmt(loadRatio, 3), verdict(loadRatio <= 1.15)],
    ];
    console.log(
      table(
        ['measure', 'gateway', 'direct'],
        [
          ['TTFB p50 (ms)', fmt(first.gateway.p50, 3), fmt(first.direct.p50, 3)],
          ['TTFB p90 (ms)', fmt(first.gateway.p90, 3), fmt(first.direct.p90, 3)],
          [`streams/s at ${CONCURRENCY} (median of ${ROUNDS})`, fmt(summarize(rates.gateway).p50, 0), fmt(summarize(rates.direct).p50, 0)],
        ],
      ),
    );
    console.log(`delegation: orchestrator received ${orchestratorBytes} B (run_task + check_task); the executor exchanged ${modelBytes} B with its model`);
    console.log(`owner stdio majordomus_get p50 per round (µs): quiet ${quiet.map((v) => fmt(v, 0)).join(' ')} · with ${EXECUTORS} executors ${loaded.map((v) => fmt(v, 0)).join(' ')}`);
    const file = await writeResult('executor', {
      startedAt,
      machine: machine(),
      ttfb: first,
      throughput: rates,
      delegation: { orchestratorBytes, modelBytes },
      stdio: { quiet, loaded },
      rows,
    });
    console.log(table(['bench', 'measure / bar', 'value', 'verdict'], rows));
    console.log(`wrote ${file}`);
    return { summaryRows: rows };
  } finally {
    await ownerProc?.stop();
    await chat.stop();
    await repo?.cleanup();
  }
}

runWhenMain(import.meta.url, main);
