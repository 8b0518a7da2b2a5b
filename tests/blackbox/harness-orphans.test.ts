/**
 * Agent sessions outlive nothing they should — black-box, with the built executable (`mcp`
 * clients of the MCP SDK) in temporary git repositories whose profiles run the fake agent CLI.
 * Covers:
 * - an owner killed with SIGKILL takes its agents' whole process groups (grandchildren included)
 *   with it within two seconds; the server that takes over reports the turn `lost`, keeps its
 *   transcript readable, and session_send resumes the agent's own session;
 * - a group that outlived its dead owner (its leader stopped, so the parent-death signal could not
 *   act) is killed by the successor, which first checks pid, group and start time: a record
 *   naming a pid that now runs something else, or a session of a live owner, is never signalled;
 * - a graceful shutdown stops every running agent (its grandchildren too) and records the turn
 *   `killed`;
 * - the servers of one checkout never signal the agents of another: starting, killing and
 *   restarting one checkout's server leaves the other checkout's agent running.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answer,
  HARNESS_RELATIVE,
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
import { Scene, waitForLease, waitForLog } from '../helpers/shared.js';
import { isAlive, waitFor } from '../helpers/wait.js';

/** Field 22 of /proc/PID/stat (start time in clock ticks), or null when the process is gone. */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

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

  it('has the successor kill a dead owner\'s group that outlived it, once pid, group and start time match', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const pidFile = join(scratch, 'grandchild.pid');
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: log, FAKE_AGENT_PIDFILE: pidFile }) }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'grandchild sleep:600000' });
    const leader = spawned.sessionInfo.pid as number;
    const [run] = await waitForInvocations(log, 1);
    const grandchild = await waitForPidFile(pidFile);
    const pids = [leader, run?.pid as number, grandchild];
    for (const pid of pids) scene.track(pid);

    // A stopped leader cannot act on the parent-death signal: the group outlives its owner.
    process.kill(leader, 'SIGSTOP');
    process.kill(owner.pid, 'SIGKILL');
    await waitFor(() => !isAlive(owner.pid), { what: 'the owner to be gone', timeoutMs: 10_000 });
    expect(procAlive(run?.pid as number)).toBe(true);
    expect(procAlive(grandchild)).toBe(true);

    const successor = await scene.client(repo.root);
    await waitForGone(pids, 10_000, 'the orphaned group');
    await waitForLog(successor.stderr, 'adopted 1 agent sessions left by an earlier server (1 turns lost, 1 orphaned process groups killed)');
    expect(await status(successor.client, spawned.session)).toMatchObject({ status: 'lost' });
  });

  it('has the successor signal no process whose start time differs, nor any session of a live owner', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: worker({ FAKE_AGENT_LOG: log }) }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' });
    const [run] = await waitForInvocations(log, 1);
    process.kill(owner.pid, 'SIGKILL');
    await waitForGone([spawned.sessionInfo.pid as number, run?.pid as number], 10_000, 'the dead owner\'s agent');

    // Processes of their own groups that the records will name: as a reused pid, and as a live owner and its agent.
    const decoy = (): number => {
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { detached: true, stdio: 'ignore' });
      child.unref();
      scene.track(child.pid as number);
      return child.pid as number;
    };
    const [reused, liveOwner, liveAgent] = [decoy(), decoy(), decoy()];
    await waitFor(() => [reused, liveOwner, liveAgent].every((pid) => startTicks(pid) !== null), { what: 'the decoys to start' });
    const dir = join(repo.root, HARNESS_RELATIVE);
    const record = JSON.parse(await readFile(join(dir, spawned.session, 'session.json'), 'utf8'));
    // The dead owner's session now names a pid that runs something else (another start time).
    await writeFile(join(dir, spawned.session, 'session.json'), JSON.stringify({ ...record, pid: reused, pgid: reused, startTicks: '1' }));
    // A session of a server that is alive, with its agent running.
    const foreign = randomUUID();
    await mkdir(join(dir, foreign, 'turns', '1'), { recursive: true });
    await writeFile(join(dir, foreign, 'turns', '1', 'transcript.jsonl'), '');
    const foreignRecord = { ...record, session: foreign, pid: liveAgent, pgid: liveAgent, startTicks: startTicks(liveAgent), ownerPid: liveOwner, ownerStartTicks: startTicks(liveOwner) };
    await writeFile(join(dir, foreign, 'session.json'), JSON.stringify(foreignRecord));

    const successor = await scene.client(repo.root);
    expect(await status(successor.client, spawned.session)).toMatchObject({ status: 'lost' });
    expect((await answer(successor.client, 'session_list')).sessions.map((s: { session: string }) => s.session)).toEqual([spawned.session]);
    for (const pid of [reused, liveOwner, liveAgent]) expect(procAlive(pid), `pid ${pid}`).toBe(true);
    // The live owner's session is left exactly as it was.
    expect(JSON.parse(await readFile(join(dir, foreign, 'session.json'), 'utf8'))).toEqual(foreignRecord);
    expect(existsSync(join(dir, foreign, 'turns', '1', 'done.json'))).toBe(false);
    await waitForLog(successor.stderr, 'adopted 1 agent sessions left by an earlier server (1 turns lost, 0 orphaned process groups killed)');
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
