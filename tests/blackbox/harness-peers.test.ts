/**
 * One session table per checkout, shared by every peer — black-box, with the built executable
 * (`mcp` clients of the MCP SDK, raw MCP over HTTP, REST) in temporary git repositories whose
 * profiles run the fake agent CLI. Covers:
 * - a session spawned by one peer is listed, read, polled and killed by another: a bridged `mcp`
 *   client and a client speaking MCP over HTTP itself with the lease's token; one peer's kill
 *   ends another peer's wait on that session;
 * - requests of peers arriving together are admitted one at a time: the live ceiling holds, sends
 *   to one session start one turn, and a list never shows a session that has no turn yet;
 * - a followed spawn or send streams every line of its turn to a bridged client as progress.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answer,
  harnessFiles,
  invocations,
  parseLines,
  refusal,
  scratchDir,
  status,
  type ProfileSpec,
} from '../helpers/harness.js';
import { leaseToken, rawRequest, type RawResponse } from '../helpers/serve.js';
import { ATTACHED, openHttpSession, Scene, SERVING_HTTP, waitForLog, type SharedClient } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

function worker(env: Record<string, string>): Record<string, ProfileSpec> {
  return { worker: { agent: 'claude', env } };
}

describe('sessions shared by every peer of the checkout', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('lets a bridged client and an HTTP client list, read and kill what the owner spawned', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({}) }) });
    const owner = await scene.client(repo.root, { name: 'orchestrator' });
    const url = (await waitForLog(owner.stderr, SERVING_HTTP))[1] as string;
    const bridge = await scene.client(repo.root, { name: 'reviewer' });
    await waitForLog(bridge.stderr, ATTACHED);

    const finished = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:shared answer', wait: true });
    const first = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' });
    const second = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' });

    // The bridge sees the owner's table: running sessions first.
    const seen = await answer(bridge.client, 'session_list');
    expect(seen.sessions.map((s: { session: string }) => s.session).slice(2)).toEqual([finished.session]);
    expect(new Set(seen.sessions.slice(0, 2).map((s: { session: string }) => s.session))).toEqual(new Set([first.session, second.session]));
    const read = await answer(bridge.client, 'session_read', { session: finished.session });
    expect(parseLines(read.lines).at(-1)?.event).toMatchObject({ type: 'result', result: 'shared answer' });
    expect(await status(bridge.client, first.session)).toMatchObject({ status: 'running' });
    expect(await answer(bridge.client, 'session_kill', { session: first.session })).toEqual({ session: first.session, action: 'terminated', wasRunning: true });
    expect(await status(owner.client, first.session)).toMatchObject({ status: 'killed' });

    // A client speaking MCP over HTTP with the lease's token sees and stops them too.
    const { session: http } = await openHttpSession(url, 'http-peer', leaseToken(repo.root));
    scene.defer(async () => {
      await http.close();
    });
    const call = async (name: string, args: Record<string, unknown>): Promise<any> => {
      const reply = await http.request('tools/call', { name: `majordomus_${name}`, arguments: args });
      expect(reply.error, JSON.stringify(reply)).toBeUndefined();
      expect(reply.result.isError ?? false, JSON.stringify(reply.result)).toBe(false);
      return reply.result.structuredContent;
    };
    const listed = await call('session_list', {});
    expect(listed.sessions[0]).toMatchObject({ session: second.session, status: 'running' });
    expect(parseLines((await call('session_read', { session: finished.session })).lines).at(-1)?.event).toMatchObject({ result: 'shared answer' });
    expect(await call('session_kill', { session: second.session })).toEqual({ session: second.session, action: 'terminated', wasRunning: true });
    expect(await status(owner.client, second.session)).toMatchObject({ status: 'killed' });
    // And a session one peer starts, the owner reaps.
    const fromBridge = await answer(bridge.client, 'spawn', { profile: 'worker', prompt: 'answer:from the bridge', wait: true });
    expect(fromBridge).toMatchObject({ exitCode: 0, answer: 'from the bridge' });
    expect(await answer(owner.client, 'session_kill', { session: fromBridge.session })).toMatchObject({ action: 'reaped' });
    expect(await refusal(bridge.client, 'session_status', { session: fromBridge.session })).toContain('call session_list');
  });

  it('ends a peer\'s wait when another peer kills the session it waits on', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({}) }) });
    const owner = await scene.client(repo.root);
    const bridge = await scene.client(repo.root);
    await waitForLog(bridge.stderr, ATTACHED);
    const waiting = answer(bridge.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000', wait: true });
    const session = await waitFor(async () => (await answer(owner.client, 'session_list')).sessions[0]?.session as string | undefined, { what: 'the session', timeoutMs: 30_000 });
    expect(await answer(owner.client, 'session_kill', { session })).toMatchObject({ action: 'terminated' });
    const ended = await waiting;
    expect(ended).toMatchObject({ session, status: 'exited', timedOut: false, text: 'error: the turn was killed' });
    expect(ended.answer).toBeUndefined();
    expect(ended.nextCursor).toBeUndefined();
  });

  /** An owner and REST calls to its HTTP thread, which runs them concurrently. */
  async function restPeer(policy?: Record<string, unknown>): Promise<{ owner: SharedClient; log: string; post(path: string, body: unknown): Promise<RawResponse>; get(path: string): Promise<RawResponse> }> {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: log }), ...(policy ? { policy } : {}) }) });
    const owner = await scene.client(repo.root);
    const port = Number(new URL((await waitForLog(owner.stderr, SERVING_HTTP))[1] as string).port);
    const headers = { Authorization: `Bearer ${leaseToken(repo.root)}`, 'Content-Type': 'application/json' };
    return {
      owner,
      log,
      post: (path, body) => rawRequest({ port, method: 'POST', path: `/api/v1/harness/${path}`, headers, body: JSON.stringify(body), timeoutMs: 60_000 }),
      get: (path) => rawRequest({ port, path: `/api/v1/harness/${path}`, headers }),
    };
  }

  it('holds the live ceiling against spawns arriving together', async () => {
    const { owner, post } = await restPeer({ max_live_sessions: 2 });
    const spawns = await Promise.all(Array.from({ length: 6 }, () => post('spawn', { profile: 'worker', prompt: 'sleep:600000' })));
    expect(spawns.map((r) => r.status).sort()).toEqual([200, 200, 422, 422, 422, 422]);
    for (const refused of spawns.filter((r) => r.status === 422)) expect(refused.json().error.message).toContain('max_live_sessions 2');
    const live = (await answer(owner.client, 'session_list')).sessions;
    expect(live.map((s: { status: string }) => s.status)).toEqual(['running', 'running']);
    for (const { session } of live) await answer(owner.client, 'session_kill', { session });
  });

  it('starts one turn for sends arriving together and refuses the others as a turn in flight', async () => {
    const { owner, log, post } = await restPeer();
    const base = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:base', wait: true });
    const sends = await Promise.all([1, 2, 3].map((n) => post('sessions/send', { session: base.session, prompt: `sleep:600000 answer:send ${n}` })));
    expect(sends.map((r) => r.status).sort()).toEqual([200, 422, 422]);
    expect(sends.find((r) => r.status === 200)?.json()).toMatchObject({ turn: 2, delivery: 'resumed' });
    // Refused while the first one's turn starts, or once it runs.
    for (const refused of sends.filter((r) => r.status === 422)) expect(refused.json().error.message).toMatch(/has a turn starting; wait for it|already has a turn in flight; wait/);
    expect((await status(owner.client, base.session)).turns).toMatchObject([
      { turn: 1, status: 'exited', exitCode: 0 },
      { turn: 2, status: 'running' },
    ]);
    const sendRuns = async (): Promise<number> => (await invocations(log)).filter((i) => i.prompt.startsWith('sleep:600000 answer:send')).length;
    await waitFor(async () => (await sendRuns()) > 0, { what: 'the accepted send\'s agent to start', timeoutMs: 30_000 });
    expect(await sendRuns()).toBe(1);
    await answer(owner.client, 'session_kill', { session: base.session });
  });

  it('lists only whole sessions while others are being spawned', async () => {
    const { post, get } = await restPeer();
    let spawning = true;
    const failures: string[] = [];
    const poll = async (): Promise<number> => {
      let polls = 0;
      while (spawning) {
        const res = await get('sessions');
        polls += 1;
        if (res.status !== 200) failures.push(res.text);
      }
      return polls;
    };
    const pollers = [poll(), poll()];
    for (let n = 0; n < 8; n += 1) expect((await post('spawn', { profile: 'worker', prompt: `answer:quick ${n}`, wait: true })).status).toBe(200);
    spawning = false;
    expect((await Promise.all(pollers)).every((polls) => polls > 0)).toBe(true);
    expect(failures).toEqual([]);
  });

  it('streams a followed turn to a bridged client as progress, every line of it, for spawn and send', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'gemini' } } }) });
    const owner = await scene.client(repo.root);
    const bridge = await scene.client(repo.root);
    await waitForLog(bridge.stderr, ATTACHED);
    const follow = async (tool: string, args: Record<string, unknown>): Promise<{ result: any; streamed: string[] }> => {
      const streamed: string[] = [];
      const reply = (await bridge.client.callTool({ name: `majordomus_${tool}`, arguments: { ...args, wait: true } }, undefined, {
        timeout: 60_000,
        onprogress: (p) => streamed.push(p.message as string),
      })) as { isError?: boolean; structuredContent?: any; content?: unknown };
      expect(reply.isError ?? false, JSON.stringify(reply.content)).toBe(false);
      return { result: reply.structuredContent, streamed };
    };
    const transcriptOf = async (session: string): Promise<string[]> =>
      (await owner.client.readResource({ uri: `majordomus://sessions/${session}/transcript` })).contents
        .map((c) => (c as { text: string }).text)
        .join('')
        .trimEnd()
        .split('\n');

    // A followed spawn streams its turn from the first line: exactly the transcript.
    const spawned = await follow('spawn', { profile: 'worker', prompt: 'lines:10:30 answer:streamed to a bridge' });
    expect(spawned.result).toMatchObject({ status: 'exited', exitCode: 0, answer: 'streamed to a bridge', timedOut: false });
    expect(spawned.streamed).toEqual(await transcriptOf(spawned.result.session));
    expect(parseLines(spawned.streamed).filter((l) => l.event?.type === 'tick')).toHaveLength(10);

    const sent = await follow('session_send', { session: spawned.result.session, prompt: 'lines:5:30 answer:and again' });
    expect(sent.result).toMatchObject({ delivery: 'resumed', turn: 2, answer: 'and again' });
    expect(sent.streamed).toEqual(await transcriptOf(spawned.result.session));
    expect(parseLines(sent.streamed).filter((l) => l.event?.type === 'tick')).toHaveLength(5);
  });
});
