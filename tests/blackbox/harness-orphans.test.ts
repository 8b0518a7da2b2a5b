/**
 * Agent sessions outlive nothing they should — black-box, with the built executable (`mcp`
 * clients of the MCP SDK) in temporary git repositories whose profiles run the fake agent CLI.
 * Covers:
 * - an owner killed with SIGKILL takes its agents' whole process groups (grandchildren included)
 *   with it within two seconds; the server that takes over reports the turn `lost`, keeps its
 *   transcript readable, and session_send resumes the agent's own session;
 * - a graceful shutdown stops every running agent (its grandchildren too) and records the turn
 *   `killed`;
 * - the servers of one checkout never signal the agents of another: starting, killing and
 *   restarting one checkout's server leaves the other checkout's agent running.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answer,
  harnessFiles,
  parseLines,
  procAlive,
  scratchDir,
  status,
  waitForGone,
  waitForInvocations,
  waitForPidFile,
  type ProfileSpec,
} from '../helpers/harness.js';
import { Scene, waitForLease } from '../helpers/shared.js';
import { isAlive, waitFor } from '../helpers/wait.js';

function worker(env: Record<string, string>): Record<string, ProfileSpec> {
  return { worker: { agent: 'claude', env } };
}

describe('orphans', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('kills the whole group of a SIGKILLed owner\'s session, and its successor reports the turn lost and resumes it', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const pidFile = join(scratch, 'grandchild.pid');
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: log, FAKE_AGENT_PIDFILE: pidFile }) }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'grandchild sleep:600000' });
    const leader = spawned.sessionInfo.pid as number;
    const [run] = await waitForInvocations(log, 1);
    const grandchild = await waitForPidFile(pidFile);
    await waitFor(async () => (await answer(owner.client, 'session_read', { session: spawned.session })).lines.length > 0, { what: 'the init event', timeoutMs: 30_000 });
    const pids = [leader, run?.pid as number, grandchild];
    for (const pid of pids) expect(procAlive(pid), `pid ${pid}`).toBe(true);

    process.kill(owner.pid, 'SIGKILL');
    // The parent-death signal reaches the group's leader, which takes the whole group down.
    await waitForGone(pids, 2_000, 'the dead owner\'s agent, its shell and its grandchild');
    await waitFor(() => !isAlive(owner.pid), { what: 'the owner to be gone', timeoutMs: 10_000 });

    const successor = await scene.client(repo.root);
    await waitForLease(repo.root, (lease) => lease.pid === successor.pid);
    expect(await status(successor.client, spawned.session)).toMatchObject({ status: 'lost', turn: 1, turnFinished: true, turns: [{ turn: 1, status: 'lost' }] });
    const list = await answer(successor.client, 'session_list');
    expect(list.sessions).toEqual([expect.objectContaining({ session: spawned.session, status: 'lost' })]);
    // What the lost turn printed is still there.
    const read = await answer(successor.client, 'session_read', { session: spawned.session });
    expect(parseLines(read.lines)[0]).toMatchObject({ kind: 'system', event: { type: 'system', subtype: 'init', session_id: run?.sessionId } });
    expect(read.nextCursor).toBeUndefined();

    const resumed = await answer(successor.client, 'session_send', { session: spawned.session, prompt: 'answer:picked up again', wait: true });
    expect(resumed).toMatchObject({ delivery: 'resumed', turn: 2, status: 'exited', exitCode: 0, answer: 'picked up again' });
    const [, again] = await waitForInvocations(log, 2);
    expect(again?.resumeId).toBe(run?.sessionId);
    expect(await status(successor.client, spawned.session)).toMatchObject({
      turns: [
        { turn: 1, status: 'lost' },
        { turn: 2, status: 'exited', exitCode: 0 },
      ],
    });
  });

  it('stops every running agent on a graceful shutdown and records the turn killed, not lost', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const pidFile = join(scratch, 'grandchild.pid');
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: log, FAKE_AGENT_PIDFILE: pidFile }) }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'grandchild sleep:600000' });
    const [run] = await waitForInvocations(log, 1);
    const grandchild = await waitForPidFile(pidFile);

    await owner.close();
    for (const pid of [spawned.sessionInfo.pid as number, run?.pid as number, grandchild]) expect(procAlive(pid), `pid ${pid}`).toBe(false);
    const next = await scene.client(repo.root);
    expect(await status(next.client, spawned.session)).toMatchObject({ status: 'killed', turns: [{ turn: 1, status: 'killed' }] });
  });

  it('never signals another checkout\'s agents when a server starts, dies or restarts', async () => {
    const scratch = await scratchDir(scene);
    const logA = join(scratch, 'a.log');
    const logB = join(scratch, 'b.log');
    const repoA = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: logA }) }) });
    const repoB = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: logB }) }) });
    const ownerB = await scene.client(repoB.root);
    const sessionB = (await answer(ownerB.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' })).session as string;
    const [agentB] = await waitForInvocations(logB, 1);
    const bAlive = async (): Promise<void> => {
      expect(procAlive(agentB?.pid as number)).toBe(true);
      expect((await status(ownerB.client, sessionB)).status).toBe('running');
    };

    const ownerA = await scene.client(repoA.root);
    await bAlive();
    await answer(ownerA.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' });
    const [agentA] = await waitForInvocations(logA, 1);
    process.kill(ownerA.pid, 'SIGKILL');
    await waitForGone([agentA?.pid as number], 10_000, 'checkout A\'s agent');
    await bAlive();

    // A's next server sweeps A's sessions (the lost one), and only those.
    const restartedA = await scene.client(repoA.root);
    expect((await answer(restartedA.client, 'session_list')).sessions).toEqual([expect.objectContaining({ status: 'lost' })]);
    await bAlive();
    await restartedA.close();
    await bAlive();
    expect(await answer(ownerB.client, 'session_kill', { session: sessionB })).toMatchObject({ action: 'terminated' });
  });
});
