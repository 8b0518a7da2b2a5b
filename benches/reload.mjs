#!/usr/bin/env node
/**
 * Reload (issue 13, "the layer stays fresh"): what an edit of a 5,000-document layer costs, measured
 * in one run on one shared server (`mcp --http-port 0`, the owner, with a bridge attached).
 *
 * 1. Edit → list_changed. One rule file rewritten at a time; the time from the write (taken just
 *    before it) to the arrival of `notifications/resources/list_changed` on the bridge's stdout
 *    (relayed from its `GET /mcp` stream). The watcher's quiet window, the build of the whole
 *    layer in the build worker, the swap into the main, HTTP and harness threads and the relay are
 *    all in it. Reported: p50 and max over EDITS edits (no bar in the issue; the build dominates).
 * 2. The owner's stdio during a burst. The owner's own client calls `majordomus_get` of a document
 *    back to back (one in flight, the latency an agent sees) while BURST rule files are rewritten
 *    GAP_MS apart, until the last edit's generation serves; against the same calls with no edit
 *    for as long as that burst took (at least CALLS calls). The two conditions alternate over
 *    ROUNDS rounds, each going first in turn. Bar: burst/none p50 ≤ 1.15.
 *
 * Writes benches/results/reload-latest.json. Environment: BENCH_RELOAD_RULES (1000),
 * BENCH_RELOAD_DOCUMENTS (4000), BENCH_RELOAD_EDITS (7), BENCH_RELOAD_BURST (20),
 * BENCH_RELOAD_GAP_MS (50), BENCH_RELOAD_ROUNDS (4), BENCH_RELOAD_CALLS (1500: the fewest calls of a no-edit stretch).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fmt, machine, makeRepo, PipeRpc, runWhenMain, SERVING_RE, spawnNode, summarize, table, verdict, withTimeout, writeResult, knob } from './lib/common.mjs';

const RULES = knob('BENCH_RELOAD_RULES', 1000, 100);
const DOCUMENTS = knob('BENCH_RELOAD_DOCUMENTS', 4000, 400);
const EDITS = knob('BENCH_RELOAD_EDITS', 7, 3);
const BURST = knob('BENCH_RELOAD_BURST', 20, 5);
const GAP_MS = knob('BENCH_RELOAD_GAP_MS', 50);
const ROUNDS = knob('BENCH_RELOAD_ROUNDS', 4, 2);
const CALLS = knob('BENCH_RELOAD_CALLS', 1500, 200);
const BAR = 1.15;
const LIST_CHANGED = 'notifications/resources/list_changed';
const GENERATION_RE = /layer generation (\d+):/g;
const now = () => performance.timeOrigin + performance.now();

/** The path of rule `i` in the generated layer (benches/lib/common.mjs `layerFiles`). */
const rulePath = (i) => `.ai/repo/rules/g${String(i % 10).padStart(2, '0')}/rule-${i}.md`;
const ruleText = (i, edit) => `---\ntitle: Rule ${i}, edit ${edit}\n---\n# Rule ${i}\n\nEdited ${edit} times by the reload benchmark.\n`;

/** The highest generation the owner logged so far. */
function generationOf(proc) {
  let highest = 1;
  for (const match of proc.stderr().matchAll(GENERATION_RE)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

async function untilGeneration(proc, generation, what, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (generationOf(proc) < generation) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (generation ${generation}); stderr:\n${proc.stderr().slice(-2000)}`);
    await delay(10);
  }
}

/** One `majordomus_get` after another until `until()` says stop; answers each round trip (µs). */
async function getLoop(rpc, uri, until) {
  const times = [];
  while (!until(times.length)) {
    const started = performance.now();
    const { message } = await rpc.request('tools/call', { name: 'majordomus_get', arguments: { uri } });
    times.push((performance.now() - started) * 1000);
    if (message.error || message.result?.isError) throw new Error(`majordomus_get failed: ${JSON.stringify(message.error ?? message.result)}`);
  }
  return times;
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const repo = await makeRepo({ rules: RULES, documents: DOCUMENTS, prefix: 'majordomus-bench-reload-' });
  const owner = spawnNode(['mcp', '--http-port', '0'], { cwd: repo.root, env: { MAJORDOMUS_LOG: 'debug', MAJORDOMUS_IDLE_SESSION_MS: String(3_600_000) } });
  let bridge = null;
  try {
    const ownerRpc = new PipeRpc(owner);
    await ownerRpc.initialize('reload-owner');
    await owner.waitStderr(SERVING_RE, 120_000);
    await owner.waitStderr(/layer: watching (\d+) directories/, 120_000);
    bridge = spawnNode(['mcp', '--http-port', '0'], { cwd: repo.root });
    const bridgeRpc = new PipeRpc(bridge);
    await bridgeRpc.initialize('reload-bridge');
    await bridge.waitStderr(/as a bridge/, 60_000);
    const arrivals = [];
    bridgeRpc.onNotification((message, receivedAt) => {
      if (message.method === LIST_CHANGED) arrivals.push(receivedAt);
    });
    const uri = 'majordomus://document/area-07/doc-7';
    let edits = 0;
    let generation = 1;

    // Warm-up: the bridge's stream is open once it hears of one reload.
    await writeFile(join(repo.root, rulePath(0)), ruleText(0, ++edits));
    await untilGeneration(owner, ++generation, 'the warm-up edit');
    await withTimeout((async () => { while (arrivals.length === 0) await delay(10); })(), 30_000, 'list_changed at the bridge (warm-up)');

    // 1. Edit → list_changed at the bridge.
    const latencies = [];
    for (let n = 1; n <= EDITS; n++) {
      const seen = arrivals.length;
      const wrote = now();
      await writeFile(join(repo.root, rulePath(n)), ruleText(n, ++edits));
      await withTimeout((async () => { while (arrivals.length === seen) await delay(2); })(), 60_000, `list_changed at the bridge after edit ${n}`);
      latencies.push(arrivals[seen] - wrote);
      await untilGeneration(owner, ++generation, `edit ${n}`);
      await delay(200); // let the owner settle before the next write
    }

    // 2. The owner's stdio p50 during a burst of edits vs none, alternating which goes first; a
    // stretch without edits lasts as long as the burst of its round, so both see the same machine.
    await getLoop(ownerRpc, uri, (n) => n >= 300); // warm
    const none = [];
    const burst = [];
    const bursts = [];
    const quiet = async (ms) => {
      const until = performance.now() + ms;
      none.push(...(await getLoop(ownerRpc, uri, (n) => n >= CALLS && performance.now() >= until)));
    };
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 1) await quiet(bursts.at(-1)?.ms ?? 0);
      const before = generationOf(owner);
      let done = false;
      const started = now();
      const writing = (async () => {
        for (let k = 0; k < BURST; k++) {
          const i = (EDITS + 1 + round * BURST + k) % RULES;
          await writeFile(join(repo.root, rulePath(i)), ruleText(i, ++edits));
          await delay(GAP_MS);
        }
        // The burst is over once a generation newer than the last write serves.
        const last = generationOf(owner);
        await untilGeneration(owner, last + 1, `round ${round}'s burst to be served`);
        bursts.push({ ms: Math.round(now() - started), generations: generationOf(owner) - before });
        done = true;
      })();
      burst.push(...(await getLoop(ownerRpc, uri, () => done)));
      await writing;
      await delay(300);
      if (round % 2 === 0) await quiet(bursts.at(-1).ms);
    }
    const reload = summarize(latencies);
    const buildMs = [...owner.stderr().matchAll(/layer generation \d+: .* built in (\d+) ms/g)].map((m) => Number(m[1]));
    const stdio = { none: summarize(none), burst: summarize(burst) };
    const ratio = stdio.burst.p50 / stdio.none.p50;
    const bars = { 'owner stdio p50 burst/none ≤ 1.15': { value: fmt(ratio, 3), pass: ratio <= BAR } };
    const output = {
      name: 'reload',
      started_at: startedAt,
      settings: { rules: RULES, documents: DOCUMENTS, edits: EDITS, burst: BURST, gap_ms: GAP_MS, rounds: ROUNDS, calls: CALLS },
      machine_before: machineBefore,
      machine_after: machine(),
      edit_to_list_changed_ms: { ...reload, values: latencies.map((v) => Math.round(v)) },
      build_ms: summarize(buildMs),
      stdio_us: stdio,
      ratio_p50: ratio,
      bursts,
      bars,
    };
    const file = await writeResult('reload', output);
    console.log(
      [
        `Reload: ${RULES + DOCUMENTS} documents; owner + a bridge; load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']}`,
        `edit → list_changed at the bridge over ${latencies.length} edits: p50 ${fmt(reload.p50, 0)} ms, min ${fmt(reload.min, 0)} ms, max ${fmt(reload.max, 0)} ms; the build worker's rebuild (read, merge, encode) p50 ${fmt(summarize(buildMs).p50, 0)} ms over ${buildMs.length} generations`,
        `bursts of ${BURST} edits ${GAP_MS} ms apart: ${bursts.map((b) => `${b.generations} generations in ${b.ms} ms`).join(' · ')}`,
        table(
          ['owner stdio majordomus_get', 'p50 µs', 'p90 µs', 'p99 µs', 'max µs', 'n'],
          ['none', 'burst'].map((k) => [k, fmt(stdio[k].p50, 0), fmt(stdio[k].p90, 0), fmt(stdio[k].p99, 0), fmt(stdio[k].max, 0), stdio[k].n]),
        ),
        table(['bar', 'value', 'verdict'], Object.entries(bars).map(([k, v]) => [k, v.value, verdict(v.pass)])),
        `written ${file}`,
      ].join('\n'),
    );
    return {
      name: 'reload',
      output,
      summaryRows: [
        ['reload', 'edit → list_changed at a bridge p50 (ms)', fmt(reload.p50, 0), 'info'],
        ...Object.entries(bars).map(([k, v]) => ['reload', k, v.value, verdict(v.pass)]),
      ],
    };
  } finally {
    await bridge?.stop();
    await owner.stop();
    await repo.cleanup();
  }
}

runWhenMain(import.meta.url, main);
