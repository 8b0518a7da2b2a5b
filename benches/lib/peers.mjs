#!/usr/bin/env node
/**
 * The peers of the coordination benchmark, in a process of their own so that their traffic never
 * runs on the event loop that times the owner's stdio client. Each peer is an MCP session on the
 * owner's `/mcp` (the lease's token, as a bridge attaches) with its own stream open (`GET /mcp`),
 * where its notifications arrive — what a bridge relays to its agent, without a bridge process per
 * peer (20 of them would take the two cores the measurement needs).
 *
 * Driven over stdin/stdout with newline JSON-RPC (the benchmark talks to it with `PipeRpc`):
 *   attach {group, base, token, count}          → {peers: ["p2", …]}
 *   claim {group, peers, perPeer}               → the claim plan (claim-plan.mjs) claimed, peer by
 *                                                  peer, each claim timed; refusals are errors; then
 *                                                  waits for a notice per overlap warned about
 *   messages.start {group, rate}                → each peer in turn sends to another, `rate` a second
 *                                                  in all; answers once the first notifications arrived
 *   messages.stop {group}                       → stops, waits (bounded) for every notification the
 *                                                  owner said it delivered, answers the counts
 *   close {group}                               → streams closed, sessions deleted
 */
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { claimPlan } from './claim-plan.mjs';
import { mcpCall, mcpHeaders, mcpInitialize, summarize, withTimeout } from './common.mjs';

const groups = new Map();

/** A tool call that must succeed; answers its structured content. */
async function tool(base, token, sessionId, name, args) {
  const { message } = await mcpCall(base, sessionId, name, args, { token });
  if (message.error || message.result?.isError) throw new Error(`${name} failed: ${JSON.stringify(message).slice(0, 400)}`);
  return message.result.structuredContent;
}

/** Opens the session's own stream and hands each JSON-RPC message on it to `onMessage`. */
async function openStream(base, token, sessionId, onMessage) {
  const controller = new AbortController();
  const res = await fetch(`${base}/mcp`, { method: 'GET', headers: { ...mcpHeaders({ token, sessionId }), accept: 'text/event-stream' }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET /mcp answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const receivedAt = performance.now();
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split('\n')) if (line.startsWith('data: ')) onMessage(JSON.parse(line.slice(6)), receivedAt);
      }
    }
  })().catch((error) => {
    if (!controller.signal.aborted) throw error;
  });
  return { close: () => controller.abort(), pump };
}

async function attach({ group, base, token, count }) {
  const g = { base, token, peers: [], sender: null, notices: { message: 0, claim: 0, other: 0 }, seqAt: new Map(), noticeMs: [] };
  groups.set(group, g);
  for (let i = 0; i < count; i += 1) {
    const sessionId = await mcpInitialize(base, { token, name: `bench-peer-${i}` });
    const { you } = await tool(base, token, sessionId, 'majordomus_inbox', { limit: 1 });
    const peer = { index: i, id: you, sessionId, stream: null };
    peer.stream = await openStream(base, token, sessionId, (message, receivedAt) => {
      if (message.method === 'notifications/majordomus/message') {
        g.notices.message += 1;
        const seq = /seq=(\d+)/.exec(message.params.message.body)?.[1];
        const sentAt = seq === undefined ? undefined : g.seqAt.get(Number(seq));
        if (sentAt !== undefined) g.noticeMs.push(receivedAt - sentAt);
      } else if (message.method === 'notifications/majordomus/claim') {
        g.notices.claim += 1;
      } else {
        g.notices.other += 1;
      }
    });
    g.peers.push(peer);
  }
  return { peers: g.peers.map((p) => p.id) };
}

async function claim({ group, peers, perPeer }) {
  const g = groups.get(group);
  const plan = claimPlan(peers, perPeer);
  const started = performance.now();
  const ms = [];
  let warnings = 0;
  for (const entry of plan) {
    const peer = g.peers[entry.peer];
    const t0 = performance.now();
    const granted = await tool(g.base, g.token, peer.sessionId, 'majordomus_claim', { paths: entry.paths, intent: entry.intent, exclusive: false, ttl_seconds: 86_400 });
    ms.push(performance.now() - t0);
    warnings += granted.warnings.length;
  }
  const seconds = +((performance.now() - started) / 1000).toFixed(2);
  // Every peer is attached, so every overlap warned about is a notice to its holder: wait for them all.
  await withTimeout(
    new Promise((resolve) => {
      const poll = setInterval(() => {
        if (g.notices.claim >= warnings) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    }),
    60_000,
    `${warnings} claim notices (${g.notices.claim} arrived)`,
  );
  const tenth = Math.max(1, Math.floor(ms.length / 10));
  return {
    claims: plan.length,
    warnings,
    seconds,
    first_tenth_ms: summarize(ms.slice(0, tenth)),
    last_tenth_ms: summarize(ms.slice(-tenth)),
    claim_notices: g.notices.claim,
  };
}

function messagesStart({ group, rate }) {
  const g = groups.get(group);
  const n = g.peers.length;
  const state = { seq: 0, sent: 0, delivered: 0, failed: 0, inFlight: 0, maxInFlight: 0, sendMs: [], running: true, timer: null, firstError: null, startedAt: performance.now(), noticesAtStart: g.notices.message };
  g.sender = state;
  g.noticeMs = [];
  const intervalMs = 1000 / rate;
  // Sends on schedule (the n-th at start + n × interval), whatever the answers take.
  const tick = () => {
    if (!state.running) return;
    const due = Math.floor((performance.now() - state.startedAt) / intervalMs) + 1;
    while (state.seq < due) send(state.seq++);
    state.timer = setTimeout(tick, Math.max(1, state.startedAt + state.seq * intervalMs - performance.now()));
  };
  const send = (seq) => {
    const from = g.peers[seq % n];
    const to = g.peers[(seq % n + 1 + (Math.floor(seq / n) % (n - 1))) % n];
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const t0 = performance.now();
    g.seqAt.set(seq, t0);
    tool(g.base, g.token, from.sessionId, 'majordomus_send_message', {
      to: [to.id],
      subject: `step ${seq}`,
      body: `seq=${seq} I am done with src/m${seq % 1000}/index.ts; the parser tests pass. Please rebase before you touch the lexer.`,
    })
      .then(
        (answer) => {
          state.sent += 1;
          state.delivered += answer.delivered.length;
          state.sendMs.push(performance.now() - t0);
        },
        (error) => {
          state.failed += 1;
          state.firstError ??= String(error.message ?? error);
        },
      )
      .finally(() => {
        state.inFlight -= 1;
      });
  };
  tick();
  // Answer once notifications flow, so the measurement starts under the load.
  return withTimeout(
    new Promise((resolve, reject) => {
      const poll = setInterval(() => {
        if (state.firstError) {
          clearInterval(poll);
          reject(new Error(state.firstError));
        } else if (g.notices.message - state.noticesAtStart >= Math.min(rate, 50)) {
          clearInterval(poll);
          resolve({ started: true });
        }
      }, 10);
    }),
    30_000,
    'the first message notifications',
  );
}

async function messagesStop({ group }) {
  const g = groups.get(group);
  const state = g.sender;
  state.running = false;
  clearTimeout(state.timer);
  const seconds = (performance.now() - state.startedAt) / 1000;
  const issued = state.seq;
  // Every send answered, then every notification the owner delivered has arrived.
  await withTimeout(
    new Promise((resolve) => {
      const poll = setInterval(() => {
        if (state.inFlight === 0 && g.notices.message - state.noticesAtStart >= state.delivered) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    }),
    30_000,
    'the last sends and their notifications',
  ).catch(() => undefined);
  g.sender = null;
  g.seqAt.clear();
  return {
    issued,
    sent: state.sent,
    failed: state.failed,
    first_error: state.firstError,
    delivered: state.delivered,
    received: g.notices.message - state.noticesAtStart,
    seconds: +seconds.toFixed(2),
    rate: +(state.sent / seconds).toFixed(1),
    max_in_flight: state.maxInFlight,
    send_ms: summarize(state.sendMs),
    notice_ms: summarize(g.noticeMs),
  };
}

async function close({ group }) {
  const g = groups.get(group);
  if (!g) return { closed: 0 };
  for (const peer of g.peers) peer.stream?.close();
  await Promise.all(g.peers.map((peer) => fetch(`${g.base}/mcp`, { method: 'DELETE', headers: mcpHeaders({ token: g.token, sessionId: peer.sessionId }) }).then((r) => r.arrayBuffer()).catch(() => undefined)));
  groups.delete(group);
  return { closed: g.peers.length };
}

const METHODS = { attach, claim, 'messages.start': messagesStart, 'messages.stop': messagesStop, close };

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  const { id, method, params } = JSON.parse(line);
  const handler = METHODS[method];
  Promise.resolve()
    .then(() => (handler ? handler(params) : Promise.reject(new Error(`unknown method ${method}`))))
    .then(
      (result) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`),
      (error) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: String(error.stack ?? error) } })}\n`),
    );
});
lines.on('close', async () => {
  for (const group of [...groups.keys()]) await close({ group });
  process.exit(0);
});
