/**
 * Following and steering agent sessions — black-box, with the built executable (`mcp`, the owner,
 * driven by the MCP SDK's client) in temporary git repositories whose profiles run the fake agent
 * CLI. Covers:
 * - follow: session_read with wait streams every new transcript line as a progress notification,
 *   in order, and its lines are exactly what it streamed; a cancelled follow (of a read or a
 *   spawn) ends, the turn goes on to its own answer and the server goes on serving;
 * - steer: a running turn is stopped and recorded steered and turn 2 resumes the agent's own
 *   session; a second steer while the first is under way is refused; a session whose agent never
 *   reported an id cannot be steered and nothing is killed; a send without steer while a turn
 *   runs is refused.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answer,
  harnessFiles,
  invocations,
  parseLines,
  procAlive,
  refusal,
  resourceText,
  scratchDir,
  status,
  waitForGone,
  waitForInvocations,
  waitForTurnEnd,
} from '../helpers/harness.js';
import { Scene } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

describe('following a session', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('streams each new transcript line as a progress notification, in order, and answers exactly those lines', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude' } } }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'lines:20:50 answer:followed' });
    const streamed: string[] = [];
    const progress: number[] = [];
    const result = (await owner.client.callTool({ name: 'majordomus_session_read', arguments: { session: spawned.session, wait: true } }, undefined, {
      timeout: 60_000,
      onprogress: (p) => {
        streamed.push(p.message as string);
        progress.push(p.progress);
      },
    })) as { isError?: boolean; structuredContent?: any };
    expect(result.isError ?? false).toBe(false);
    const read = result.structuredContent as { lines: string[]; nextCursor?: string };
    expect(read.lines).toEqual(streamed);
    // It ended with the turn: everything was read.
    expect(read.nextCursor).toBeUndefined();
    expect(progress).toEqual(progress.map((_p, i) => i + 1));
    // What it streamed is the end of the transcript, line for line, the ticks in their order.
    const transcript = (await resourceText(owner.client, `majordomus://sessions/${spawned.session}/transcript`)).text.trimEnd().split('\n');
    expect(streamed.length).toBeGreaterThan(2);
    expect(transcript.slice(-streamed.length)).toEqual(streamed);
    const parsed = parseLines(streamed);
    expect(parsed.at(-1)?.event).toMatchObject({ type: 'result', result: 'followed' });
    const ticks = parsed.filter((l) => l.event?.type === 'tick').map((l) => l.event.at as number);
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
  });

  it('ends a follow the caller cancels, leaves the turn running, and goes on serving', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude' } } }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'lines:600:100' });
    const controller = new AbortController();
    let streamed = 0;
    const follow = owner.client.callTool({ name: 'majordomus_session_read', arguments: { session: spawned.session, wait: true } }, undefined, {
      timeout: 60_000,
      signal: controller.signal,
      onprogress: () => {
        streamed += 1;
        if (streamed === 2) controller.abort('enough');
      },
    });
    await expect(follow).rejects.toThrow();
    expect(streamed).toBeGreaterThanOrEqual(2);
    // The server answers the next calls, the turn goes on, and a new follow works.
    const now = await status(owner.client, spawned.session);
    expect(now.status).toBe('running');
    const again = (await owner.client.callTool({ name: 'majordomus_session_read', arguments: { session: spawned.session, wait: true, timeout_seconds: 1 } }, undefined, {
      timeout: 60_000,
      onprogress: () => undefined,
    })) as { structuredContent?: any };
    expect(again.structuredContent.lines.length).toBeGreaterThan(0);
    expect(again.structuredContent.nextCursor).toEqual(expect.any(String));
    expect(await answer(owner.client, 'session_kill', { session: spawned.session })).toMatchObject({ action: 'terminated' });

    // A cancelled spawn with wait leaves its turn to end as it would have, answer and all.
    const abandoned = new AbortController();
    const spawnedWaiting = owner.client.callTool({ name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'lines:10:100 answer:kept anyway', wait: true } }, undefined, {
      timeout: 60_000,
      signal: abandoned.signal,
      onprogress: () => abandoned.abort('enough'),
    });
    await expect(spawnedWaiting).rejects.toThrow();
    const [later] = (await answer(owner.client, 'session_list')).sessions.filter((s: { session: string }) => s.session !== spawned.session);
    const ended = await waitForTurnEnd(owner.client, later.session);
    expect(ended).toMatchObject({ status: 'exited', exitCode: 0, hasResult: true });
    expect((await resourceText(owner.client, `majordomus://sessions/${later.session}/result`)).text).toBe('kept anyway');
  });
});

describe('steering a session', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('stops the running turn, records it steered, and resumes the session in turn 2', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude', env: { FAKE_AGENT_LOG: log } } } }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' });
    const firstPid = spawned.sessionInfo.pid as number;
    // Once the agent's first event is in the transcript, its session id is known.
    await waitFor(async () => (await answer(owner.client, 'session_read', { session: spawned.session })).lines.length > 0, { what: 'the init event', timeoutMs: 30_000 });
    const [turn1] = await waitForInvocations(log, 1);

    expect(await refusal(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:too early' })).toContain('already has a turn in flight; wait');
    const steered = await answer(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:new direction', steer: true, wait: true });
    expect(steered).toMatchObject({ delivery: 'steered', turn: 2, status: 'exited', exitCode: 0, answer: 'new direction' });
    expect(procAlive(firstPid)).toBe(false);
    const [, turn2] = await waitForInvocations(log, 2);
    expect(turn2?.resumeId).toBe(turn1?.sessionId);
    expect(await status(owner.client, spawned.session)).toMatchObject({
      status: 'exited',
      turn: 2,
      turns: [
        { turn: 1, status: 'steered' },
        { turn: 2, status: 'exited', exitCode: 0 },
      ],
    });
    expect((await resourceText(owner.client, `majordomus://sessions/${spawned.session}/result`)).text).toBe('new direction');
  });

  it('refuses to steer a session whose agent never reported an id, and kills nothing', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'codex', env: { FAKE_AGENT_LOG: log } } } }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'no-session sleep:600000' });
    const [started] = await waitForInvocations(log, 1);
    const text = await refusal(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:x', steer: true });
    expect(text).toContain('the agent never reported a session id; spawn a new session instead');
    expect(await status(owner.client, spawned.session)).toMatchObject({ status: 'running', turn: 1, turns: [{ turn: 1, status: 'running' }] });
    expect(procAlive(started?.pid as number)).toBe(true);
    expect(await invocations(log)).toHaveLength(1);
    expect(await answer(owner.client, 'session_kill', { session: spawned.session })).toMatchObject({ action: 'terminated' });
    await waitForGone([started?.pid as number], 10_000, 'the agent');
  });

  it('refuses a second steer while the first is stopping the turn', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'codex', env: { FAKE_AGENT_LOG: log } } } }) });
    // A grace of 1 s instead of 5 (harness-vendors keeps the real one): the second steer is sent
    // right behind the first on the same connection, so it still finds the first under way.
    const owner = await scene.client(repo.root, { env: { MAJORDOMUS_TEST_KILL_GRACE_MS: '1000' } });
    // An agent that ignores SIGTERM keeps the first steer busy for the whole grace period.
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'ignore-term' });
    await waitFor(async () => (await answer(owner.client, 'session_read', { session: spawned.session })).lines.length > 0, { what: 'the agent to start', timeoutMs: 30_000 });
    const first = answer(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:first steer', steer: true, wait: true });
    // Sent after the first on the same connection: it finds the first under way.
    const second = await refusal(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:second steer', steer: true });
    expect(second).toContain(`session ${spawned.session} is already being steered; wait for that turn to start`);
    expect(await first).toMatchObject({ delivery: 'steered', turn: 2, exitCode: 0, answer: 'first steer' });
    expect((await invocations(log)).map((i) => i.prompt)).toEqual(['ignore-term', 'answer:first steer']);
    expect((await status(owner.client, spawned.session)).turns.map((t) => t.status)).toEqual(['steered', 'exited']);
  });
});
