/**
 * Each agent CLI's event shapes end to end, and what real CLIs will not do on demand — black-box,
 * with the built executable (`mcp`, the owner, driven by the MCP SDK's client) in one temporary git
 * repository whose profiles run the fake agent as claude, codex, gemini, opencode and the
 * executor. Covers:
 * - for every agent: the answer of a turn, a resumed second turn (the agent gets its own session
 *   id back, the vendor's way), an error event (`/result` is `error: …`), a crash (its exit code
 *   and the error text), and a session without an id (session_send refused);
 * - a 2 MB stdout line: kept cut, a read returns it cut on a UTF-8 boundary and the cursor moves
 *   on to the answer;
 * - stdout lines written in two pieces split inside a UTF-8 character: the characters arrive whole;
 * - an agent that ignores SIGTERM is killed anyway after the grace period (SIGKILL), the real 5 s;
 * - a grandchild the agent forked dies with it, killed or exited;
 * - stderr shows in session_read's `stderr` and the stderr resource;
 * - an agent flooding stdout does not keep the server from answering other calls.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENTS,
  answer,
  harnessFiles,
  invocations,
  parseLines,
  procAlive,
  readAll,
  refusal,
  resourceText,
  scratchDir,
  status,
  waitForGone,
  waitForPidFile,
  waitForTurnEnd,
  type Agent,
  type Invocation,
  type ProfileSpec,
} from '../helpers/harness.js';
import { Scene, type SharedClient } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const scene = new Scene();
let owner: SharedClient;
let log: string;
let pidFile: string;

beforeAll(async () => {
  const scratch = await scratchDir(scene);
  log = join(scratch, 'agent.log');
  pidFile = join(scratch, 'grandchild.pid');
  const env = { FAKE_AGENT_LOG: log, FAKE_AGENT_PIDFILE: pidFile };
  const profiles: Record<string, ProfileSpec> = {};
  for (const agent of AGENTS) profiles[agent] = { agent, env };
  const repo = await scene.repo({ files: harnessFiles({ profiles }) });
  owner = await scene.client(repo.root);
});
afterAll(() => scene.cleanup());

/** The fake's invocations of one agent whose prompt is `prompt`. */
async function invocationsOf(agent: Agent, prompt: string): Promise<Invocation[]> {
  return (await invocations(log)).filter((i) => i.vendor === agent && i.prompt.includes(prompt));
}

function spawnWait(agent: Agent, prompt: string): Promise<any> {
  return answer(owner.client, 'spawn', { profile: agent, prompt, wait: true });
}

async function result(session: string): Promise<string> {
  return (await resourceText(owner.client, `majordomus://sessions/${session}/result`)).text;
}

/** Waits until the session's transcript has a line (the agent is up and printed its first event). */
async function waitForFirstLine(session: string): Promise<void> {
  await waitFor(async () => (await answer(owner.client, 'session_read', { session })).lines.length > 0, { what: `the first line of ${session}`, timeoutMs: 30_000 });
}

describe.each(AGENTS)('the %s agent', (agent) => {
  it('answers a turn, resumes its own session in the next, and reports error events and crashes', async () => {
    const first = await spawnWait(agent, `answer:hello from ${agent}`);
    expect(first).toMatchObject({ agent, status: 'exited', exitCode: 0, answer: `hello from ${agent}`, text: `hello from ${agent}` });
    expect(await result(first.session)).toBe(`hello from ${agent}`);
    const kinds = parseLines((await answer(owner.client, 'session_read', { session: first.session })).lines).map((l) => l.kind);
    expect(kinds).toContain('assistant');

    const second = await answer(owner.client, 'session_send', { session: first.session, prompt: `answer:again ${agent}`, wait: true });
    expect(second).toMatchObject({ delivery: 'resumed', turn: 2, exitCode: 0, answer: `again ${agent}` });
    const [turn1] = await invocationsOf(agent, `hello from ${agent}`);
    const [turn2] = await invocationsOf(agent, `again ${agent}`);
    expect(turn1?.resumeId).toBeNull();
    expect(turn1?.sessionId).toEqual(expect.any(String));
    expect(turn2?.resumeId).toBe(turn1?.sessionId);
    expect(JSON.stringify(second)).not.toContain(turn1?.sessionId);

    const failed = await spawnWait(agent, `error:the model refused (${agent})`);
    expect(failed).toMatchObject({ status: 'exited', exitCode: 1 });
    expect(failed.answer).toBeUndefined();
    expect(failed.text).toMatch(new RegExp(`^error: .*the model refused \\(${agent}\\)`));
    expect(await result(failed.session)).toBe(failed.text);
    expect(parseLines((await answer(owner.client, 'session_read', { session: failed.session })).lines).map((l) => l.kind)).toContain('error');

    const crashed = await spawnWait(agent, 'crash:3');
    expect(crashed).toMatchObject({ status: 'exited', exitCode: 3, text: 'error: exited with code 3 and no answer' });
    expect(await result(crashed.session)).toBe('error: exited with code 3 and no answer');
    expect((await answer(owner.client, 'session_list')).sessions.find((s: { session: string }) => s.session === crashed.session)).toMatchObject({ status: 'exited', exitCode: 3 });

    const anonymous = await spawnWait(agent, `no-session answer:nameless ${agent}`);
    expect(anonymous).toMatchObject({ status: 'exited', exitCode: 0, answer: `nameless ${agent}` });
    const refused = await refusal(owner.client, 'session_send', { session: anonymous.session, prompt: 'answer:more' });
    expect(refused).toContain(`cannot resume session ${anonymous.session}: the agent never reported a session id; spawn a new session instead`);
    expect(await invocationsOf(agent, 'answer:more')).toEqual([]);
  });
});

describe('what real agents will not do on demand', () => {
  it('keeps a 2 MB line cut, and a read returns it cut on a UTF-8 boundary and moves on', async () => {
    const spawned = await answer(owner.client, 'spawn', { profile: 'claude', prompt: 'huge:2000000 answer:after the huge line' });
    const start = spawned.nextCursor as string;
    const done = await waitForTurnEnd(owner.client, spawned.session);
    expect(done).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(await result(spawned.session)).toBe('after the huge line');

    const pages = await readAll(owner.client, spawned.session, start);
    const lines = pages.flat();
    const cut = lines.filter((line) => /…\[cut \d+ bytes\]$/.test(line));
    expect(cut).toHaveLength(1);
    const cutLine = cut[0] as string;
    // At most a read's worth (60,000 bytes) and the mark; the page that holds it holds nothing else.
    expect(Buffer.byteLength(cutLine)).toBeLessThanOrEqual(60_000 + 30);
    expect(Buffer.byteLength(cutLine)).toBeGreaterThan(59_000);
    expect(cutLine).not.toContain('\uFFFD');
    expect(pages.find((page) => page.includes(cutLine))).toEqual([cutLine]);
    // The cursor went on past it, to the answer.
    const after = parseLines(lines.slice(lines.indexOf(cutLine) + 1));
    expect(after.map((l) => l.kind)).toEqual(['assistant', 'result']);
    // The transcript kept the line as its head and size (it was never parsed whole).
    const entry = (await resourceText(owner.client, `majordomus://sessions/${spawned.session}/transcript`)).text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l))
      .find((l) => l.event?.truncated === true);
    expect(entry).toMatchObject({ kind: 'other', event: { truncated: true, bytes: 1_999_999 } });
    expect(entry.event.head.startsWith('{"type":"huge","pad":"xxx')).toBe(true);
    expect(Buffer.byteLength(entry.event.head)).toBe(64 * 1024);
  });

  it('delivers characters whole when the agent writes a line in two pieces split inside one', async () => {
    const text = 'héllo ✓ 日本語 🎉 done';
    for (const agent of ['claude', 'gemini'] as const) {
      const spawned = await spawnWait(agent, `split-utf8 answer:${text}`);
      expect(spawned).toMatchObject({ exitCode: 0, answer: text });
      const read = await answer(owner.client, 'session_read', { session: spawned.session });
      expect(read.lines.join('\n')).not.toContain('\uFFFD');
      expect(parseLines(read.lines).filter((l) => l.kind === 'assistant').map((l) => l.text).join('')).toBe(text);
    }
  });

  it('kills an agent that ignores SIGTERM after the grace period', async () => {
    const spawned = await answer(owner.client, 'spawn', { profile: 'codex', prompt: 'ignore-term' });
    // Its first event comes after it started ignoring SIGTERM.
    await waitForFirstLine(spawned.session);
    const [agentRun] = await invocationsOf('codex', 'ignore-term');
    const started = Date.now();
    const killed = await answer(owner.client, 'session_kill', { session: spawned.session });
    const took = Date.now() - started;
    expect(killed).toEqual({ session: spawned.session, action: 'terminated', wasRunning: true });
    // SIGTERM did nothing: it took the 5 s grace, then SIGKILL. The real grace: this owner has no
    // MAJORDOMUS_TEST_KILL_GRACE_MS (harness-follow-steer shortens it).
    expect(took).toBeGreaterThanOrEqual(4_500);
    expect(procAlive(agentRun?.pid as number)).toBe(false);
    expect(await status(owner.client, spawned.session)).toMatchObject({ status: 'killed', turns: [{ turn: 1, status: 'killed' }] });
  });

  it('takes a grandchild down with the agent, killed or exited', async () => {
    const running = await answer(owner.client, 'spawn', { profile: 'opencode', prompt: 'grandchild sleep:600000' });
    const grandchild = await waitForPidFile(pidFile);
    expect(procAlive(grandchild)).toBe(true);
    expect(await answer(owner.client, 'session_kill', { session: running.session })).toMatchObject({ action: 'terminated' });
    await waitForGone([grandchild], 5_000, 'the killed agent\'s grandchild');

    const { rmSync } = await import('node:fs');
    rmSync(pidFile);
    const exited = await spawnWait('claude', 'grandchild answer:left a child behind');
    expect(exited).toMatchObject({ exitCode: 0, answer: 'left a child behind' });
    const orphan = await waitForPidFile(pidFile);
    await waitForGone([orphan], 5_000, 'the exited agent\'s grandchild');
  });

  it('shows what the agent wrote to stderr in session_read and the stderr resource', async () => {
    const spawned = await spawnWait('executor', 'answer:fine\nstderr:warning: the disk is nearly full');
    expect(spawned).toMatchObject({ exitCode: 0, answer: 'fine' });
    const read = await answer(owner.client, 'session_read', { session: spawned.session });
    expect(read.stderr).toBe('warning: the disk is nearly full\n');
    expect((await resourceText(owner.client, `majordomus://sessions/${spawned.session}/stderr`)).text).toBe('warning: the disk is nearly full\n');
  });

  it('goes on answering other calls while an agent floods its stdout', async () => {
    const spawned = await answer(owner.client, 'spawn', { profile: 'gemini', prompt: 'flood:2000000:3 answer:flooded' });
    await waitForFirstLine(spawned.session);
    const latencies: number[] = [];
    while ((await status(owner.client, spawned.session)).status === 'running') {
      const started = Date.now();
      await answer(owner.client, 'list_profiles');
      await answer(owner.client, 'session_list');
      latencies.push(Date.now() - started);
      if (latencies.length > 10_000) break;
    }
    expect(latencies.length).toBeGreaterThanOrEqual(3);
    // Generous for a loaded machine: answered in well under the flood's own length.
    expect(Math.max(...latencies)).toBeLessThan(3_000);
    expect(await result(spawned.session)).toBe('flooded');
    const seqs = parseLines((await answer(owner.client, 'session_read', { session: spawned.session, tail: 200 })).lines)
      .filter((l) => l.event?.type === 'flood')
      .map((l) => l.event.seq as number);
    // A tail is at most a read's worth: some fifty lines of a kilobyte.
    expect(seqs.length).toBeGreaterThan(40);
    expect(seqs).toEqual(seqs.map((_s, i) => (seqs[0] as number) + i));
  });
});
