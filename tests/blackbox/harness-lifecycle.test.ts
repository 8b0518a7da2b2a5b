/**
 * The harness's sessions from spawn to reap — black-box, with the built executable (`mcp`, the
 * owner, driven by the MCP SDK's client) in a temporary git repository whose profiles run the fake
 * agent CLI. Covers:
 * - list_profiles shows the nominated profiles only, marks the policy's default and names the
 *   problem of a profile whose command does not exist or whose cwd is missing or outside;
 * - spawn with wait answers the agent's answer, exit code and sessionInfo (argv without the
 *   vendor's session id, env names only, the turn's files under .ai/local/state/harness);
 *   session_send resumes the vendor's own session (turn 2 runs with turn 1's id); session_status
 *   lists the turns; session_read gives the tail and pages by cursor across turns, ≤ 60 KB a
 *   page, the cursor absent only once the session exited and all was read;
 * - the session resources (index, status, result, transcript, stderr) and the template;
 * - a wait that reaches its deadline answers timedOut and the turn goes on; session_kill
 *   terminates a running session (killed), reaps a finished one (its directory gone), and
 *   then no longer knows it;
 * - every turn replays the launch (cwd, model, mode, args), sessionInfo shows secret-looking
 *   arguments redacted, and a refused send leaves the launch as it was;
 * - retention: beyond the policy's max_sessions the oldest finished session is reaped;
 * - nothing is written outside .ai/local (git status stays clean).
 */
import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git } from '../helpers/fixture-repo.js';
import {
  answer,
  FAKE_AGENT,
  HARNESS_RELATIVE,
  harnessFiles,
  parseLines,
  readAll,
  refusal,
  resourceText,
  scratchDir,
  sessionDir,
  status,
  waitForInvocations,
  waitForTurnEnd,
  procAlive,
} from '../helpers/harness.js';
import { Scene } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('harness sessions through the owner\'s stdio client', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('ends the turn of an agent that exits at once, before the harness has finished starting it', async () => {
    // A shell agent answers and exits within a millisecond or two: its exit must not be missed.
    const scratch = await scratchDir(scene);
    const agent = join(scratch, 'quick-agent.sh');
    await writeFile(agent, `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{"type":"result","subtype":"success","is_error":false,"result":"quick","session_id":"q1"}'\n`, { mode: 0o755 });
    const repo = await scene.repo({ files: harnessFiles({ profiles: { quick: { agent: 'claude', command: agent } } }) });
    const owner = await scene.client(repo.root);
    for (let i = 0; i < 5; i += 1) {
      const spawned = await answer(owner.client, 'spawn', { profile: 'quick', prompt: 'go', wait: true, timeout_seconds: 20 });
      expect(spawned, `spawn ${i}`).toMatchObject({ status: 'exited', exitCode: 0, answer: 'quick', timedOut: false });
    }
  });

  it('lists only the nominated profiles, marks the default and names a missing command', async () => {
    const repo = await scene.repo({
      files: harnessFiles({
        profiles: {
          alpha: { agent: 'claude', description: 'the default one' },
          beta: { agent: 'codex', model: 'm1', mode: 'read-only', cwd: 'src' },
          hidden: { agent: 'claude', enabled: false },
          broken: { agent: 'gemini', command: '/nonexistent/gemini-cli' },
          lost: { agent: 'opencode', cwd: 'no/such/dir' },
          outside: { agent: 'executor', cwd: '../elsewhere' },
        },
        policy: { default_profile: 'alpha' },
      }),
    });
    const owner = await scene.client(repo.root);
    const { profiles } = await answer(owner.client, 'list_profiles');
    expect(profiles).toEqual([
      { id: 'alpha', agent: 'claude', description: 'the default one', isDefault: true },
      { id: 'beta', agent: 'codex', model: 'm1', mode: 'read-only', cwd: 'src', isDefault: false },
      { id: 'broken', agent: 'gemini', isDefault: false, error: expect.stringContaining('"/nonexistent/gemini-cli" was not found') },
      { id: 'lost', agent: 'opencode', cwd: 'no/such/dir', isDefault: false, error: 'cwd "no/such/dir" does not exist in the checkout' },
      { id: 'outside', agent: 'executor', cwd: '../elsewhere', isDefault: false, error: 'cwd "../elsewhere" leads outside the checkout; give a path inside it' },
    ]);
    // A profile that is not nominated does not exist for spawn either.
    expect(await refusal(owner.client, 'spawn', { profile: 'hidden', prompt: 'hi' })).toContain('not nominated');
  });

  it('spawns with wait, resumes with send, and shows status, tail, cursor pages and resources', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({
      files: harnessFiles({ profiles: { worker: { agent: 'claude', model: 'opus', env: { FAKE_AGENT_LOG: log, SECRET_TOKEN: 'do-not-show' } } } }),
    });
    const owner = await scene.client(repo.root);

    const first = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'stderr:a warning\nanswer:first answer', wait: true });
    expect(first).toMatchObject({ profile: 'worker', agent: 'claude', status: 'exited', turn: 1, exitCode: 0, timedOut: false, answer: 'first answer', text: 'first answer' });
    expect(first.session).toMatch(UUID);
    expect(first.nextCursor).toBeUndefined();
    const dir = `${HARNESS_RELATIVE}/${first.session}`;
    expect(first.sessionInfo).toEqual({
      profile: 'worker',
      agent: 'claude',
      model: 'opus',
      cwd: '.',
      startedAt: expect.any(String),
      turnStartedAt: expect.any(String),
      pid: expect.any(Number),
      files: {
        dir,
        turnsDir: `${dir}/turns`,
        turn: 1,
        turnDir: `${dir}/turns/1`,
        transcript: `${dir}/turns/1/transcript.jsonl`,
        stderr: `${dir}/turns/1/stderr.log`,
        done: `${dir}/turns/1/done.json`,
        breadcrumb: `${dir}/session.json`,
      },
      argv: [FAKE_AGENT, '-p', '--output-format', 'stream-json', '--verbose', '--model', 'opus'],
      // Names only: the values (the log's path, the secret) never appear.
      env: ['FAKE_AGENT_LOG', 'FAKE_AGENT_VENDOR', 'MAJORDOMUS_SPAWN_DEPTH', 'SECRET_TOKEN'],
      promptBytes: Buffer.byteLength('stderr:a warning\nanswer:first answer'),
    });
    expect(JSON.stringify(first)).not.toContain('do-not-show');
    for (const file of Object.values(first.sessionInfo.files)) if (typeof file === 'string') expect(existsSync(join(repo.root, file)), file).toBe(true);
    expect(statSync(join(repo.root, dir)).mode & 0o777).toBe(0o700);

    const [turn1] = await waitForInvocations(log, 1);
    expect(turn1?.resumeId).toBeNull();
    const vendorId = turn1?.sessionId as string;
    expect(vendorId).toMatch(UUID);

    const second = await answer(owner.client, 'session_send', { session: first.session, prompt: 'answer:second answer', wait: true });
    expect(second).toMatchObject({ session: first.session, delivery: 'resumed', status: 'exited', turn: 2, exitCode: 0, answer: 'second answer' });
    const [, turn2] = await waitForInvocations(log, 2);
    // The second turn resumed the agent's own session, replaying the launch (model, cwd).
    expect(turn2).toMatchObject({ resumeId: vendorId, sessionId: vendorId, model: 'opus', cwd: repo.root, prompt: 'answer:second answer' });
    expect(second.sessionInfo.files.transcript).toBe(`${dir}/turns/2/transcript.jsonl`);
    expect(second.sessionInfo.argv).not.toContain(vendorId);
    expect(second.sessionInfo.argv).toContain('--resume');

    const now = await status(owner.client, first.session);
    expect(now).toEqual({
      session: first.session,
      status: 'exited',
      turn: 2,
      turnFinished: true,
      transcriptBytes: expect.any(Number),
      hasResult: true,
      exitCode: 0,
      // Where the turn described is: the poll that says the answer landed says where.
      files: expect.objectContaining({ turn: 2, turnDir: `${dir}/turns/2`, transcript: `${dir}/turns/2/transcript.jsonl`, done: `${dir}/turns/2/done.json` }),
      turns: [
        { turn: 1, status: 'exited', exitCode: 0, uri: `majordomus://sessions/${first.session}/turns/1/result` },
        { turn: 2, status: 'exited', exitCode: 0, uri: `majordomus://sessions/${first.session}/turns/2/result` },
      ],
    });
    expect(now.transcriptBytes).toBeGreaterThan(0);
    const older = await answer(owner.client, 'session_status', { session: first.session, turn: 1 });
    expect(older).toMatchObject({ turn: 1, status: 'exited', hasResult: true, files: { turn: 1, transcript: `${dir}/turns/1/transcript.jsonl` } });

    // The tail of the latest turn: its last lines, and nothing left to read.
    const tail = await answer(owner.client, 'session_read', { session: first.session, tail: 2 });
    expect(tail.nextCursor).toBeUndefined();
    expect(parseLines(tail.lines).map((l) => l.kind)).toEqual(['assistant', 'result']);
    expect(parseLines(tail.lines)[1]?.event).toMatchObject({ type: 'result', result: 'second answer' });
    // stderr is that of the latest turn (turn 2 wrote none); turn 1's stayed in its file.
    expect(tail.stderr).toBeUndefined();

    // The vendor's id is on no answer but the transcript (the CLI's own output).
    const list = await answer(owner.client, 'session_list');
    expect(list.sessions).toEqual([
      { session: first.session, profile: 'worker', agent: 'claude', status: 'exited', createdAt: first.sessionInfo.startedAt, lastTurnAt: second.sessionInfo.turnStartedAt, exitCode: 0 },
    ]);
    for (const shown of [first, second, now, older, list]) expect(JSON.stringify(shown)).not.toContain(vendorId);
    expect(tail.lines.join('\n')).toContain(vendorId);

    // Resources: the index, and the session's parts.
    const index = await resourceText(owner.client, 'majordomus://sessions');
    expect(JSON.parse(index.text)).toEqual(list);
    const result = await resourceText(owner.client, `majordomus://sessions/${first.session}/result`);
    expect(result).toEqual({ text: 'second answer', mimeType: 'text/plain' });
    const statusResource = await resourceText(owner.client, `majordomus://sessions/${first.session}/status`);
    expect(JSON.parse(statusResource.text)).toEqual(now);
    const transcript = await resourceText(owner.client, `majordomus://sessions/${first.session}/transcript`);
    const transcriptLines = transcript.text.trimEnd().split('\n');
    expect(parseLines(transcriptLines).map((l) => l.kind)).toEqual(['system', 'assistant', 'result']);
    expect(transcriptLines.slice(-2)).toEqual(tail.lines);
    const stderr = await resourceText(owner.client, `majordomus://sessions/${first.session}/stderr`);
    expect(stderr.text).toBe('');
    const { resourceTemplates } = await owner.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('majordomus://sessions/{session}/{part}');
    for (const resource of (await owner.client.listResources()).resources) expect(resource.uri).not.toContain('{');
    expect((await owner.client.listResources()).resources.map((r) => r.uri)).toContain('majordomus://sessions');
  });

  it('replays the launch (cwd, model, mode, args) on every turn, shows secret arguments redacted, and a refused send changes nothing', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({
      files: harnessFiles({
        profiles: {
          worker: { agent: 'claude', args: ['--append-system-prompt', 'be brief'], env: { FAKE_AGENT_LOG: log } },
          reader: { agent: 'gemini', env: { FAKE_AGENT_LOG: log } },
        },
      }),
    });
    const owner = await scene.client(repo.root);
    const first = await answer(owner.client, 'spawn', {
      profile: 'worker',
      prompt: 'answer:one',
      cwd: 'src',
      with_config: { model: 'm2', mode: 'plan' },
      // Secrets that cannot occur in a session id or a path (a random UUID may hold any hex run).
      args: ['--api-key', 'sk-secret', '--token=quiet-value'],
      wait: true,
    });
    expect(first.sessionInfo).toMatchObject({ cwd: 'src', model: 'm2', mode: 'plan' });
    expect(first.sessionInfo.argv).toEqual(expect.arrayContaining(['--append-system-prompt', 'be brief', '--api-key', '[redacted]', '--token=[redacted]']));
    expect(JSON.stringify(first)).not.toMatch(/sk-secret|quiet-value/);
    await answer(owner.client, 'session_send', { session: first.session, prompt: 'answer:two', wait: true });
    const [turn1, turn2] = await waitForInvocations(log, 2);
    for (const turn of [turn1, turn2]) {
      expect(turn).toMatchObject({ cwd: join(repo.root, 'src'), model: 'm2', mode: 'plan' });
      expect(turn?.argv).toEqual(expect.arrayContaining(['--append-system-prompt', 'be brief', '--api-key', 'sk-secret', '--token=quiet-value']));
    }

    // A send the agent's CLI cannot take is refused, and the session's launch stays as it was.
    const reader = await answer(owner.client, 'spawn', { profile: 'reader', prompt: 'answer:three', wait: true });
    const tooLong = `answer:${'x'.repeat(100 * 1024)}`;
    expect(await refusal(owner.client, 'session_send', { session: reader.session, prompt: tooLong, mode: 'plan' })).toContain('gemini takes its prompt as one argument');
    const after = await answer(owner.client, 'session_send', { session: reader.session, prompt: 'answer:four', wait: true });
    expect(after.sessionInfo.mode).toBeUndefined();
    const runs = await waitForInvocations(log, 4);
    expect(runs.map((r) => r.prompt)).toEqual(['answer:one', 'answer:two', 'answer:three', 'answer:four']);
    expect(runs[3]?.mode).toBeNull();
  });

  it('pages a transcript by cursor, at most about 60 KB a page, across turns, until it is all read', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'codex' } } }) });
    const owner = await scene.client(repo.root);
    // 1000 lines of about 95 bytes: more than one page.
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'lines:1000:0 answer:paged' });
    expect(spawned.status).toBe('running');
    const start = spawned.nextCursor as string;
    expect(start).toEqual(expect.any(String));
    // While the turn runs, a read always hands a cursor on.
    const early = await answer(owner.client, 'session_read', { session: spawned.session, cursor: start });
    if ((await status(owner.client, spawned.session)).status === 'running') expect(early.nextCursor).toEqual(expect.any(String));
    await waitForTurnEnd(owner.client, spawned.session);
    await answer(owner.client, 'session_send', { session: spawned.session, prompt: 'answer:turn two', wait: true });

    const pages = await readAll(owner.client, spawned.session, start);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const page of pages) expect(page.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0)).toBeLessThanOrEqual(60_001);
    const all = parseLines(pages.flat());
    const ticks = all.filter((l) => l.event?.type === 'tick');
    expect(ticks).toHaveLength(1000);
    // Turn 1's lines, then turn 2's, each exactly once.
    const answers = all.filter((l) => l.event?.type === 'item.completed').map((l) => l.event.item.text);
    expect(answers).toEqual(['paged', 'turn two']);
    expect(all.filter((l) => l.event?.type === 'thread.started')).toHaveLength(2);
    expect(all.at(-1)?.event).toEqual({ type: 'turn.completed', usage: expect.any(Object) });
  });

  it('kills a running session (terminated, killed), reaps it on a second kill, and then no longer knows it', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude' } } }) });
    const owner = await scene.client(repo.root);
    // A wait that reaches its deadline answers, and the turn goes on.
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000', wait: true, timeout_seconds: 1 });
    expect(spawned).toMatchObject({ status: 'running', timedOut: true, nextCursor: expect.any(String) });
    expect(spawned.text).toContain('follow it with session_read (wait: true)');
    const pid = spawned.sessionInfo.pid as number;
    expect(procAlive(pid)).toBe(true);
    await waitFor(async () => (await answer(owner.client, 'session_read', { session: spawned.session })).lines.length > 0, { what: 'the agent to start', timeoutMs: 30_000 });

    const killed = await answer(owner.client, 'session_kill', { session: spawned.session });
    expect(killed).toEqual({ session: spawned.session, action: 'terminated', wasRunning: true });
    expect(procAlive(pid)).toBe(false);
    const after = await status(owner.client, spawned.session);
    expect(after).toMatchObject({ status: 'killed', turnFinished: true, turns: [{ turn: 1, status: 'killed' }] });
    expect((await resourceText(owner.client, `majordomus://sessions/${spawned.session}/result`)).text).toBe('error: the turn was killed');
    const dir = sessionDir(repo.root, spawned.session);
    expect(existsSync(join(dir, 'turns/1/done.json'))).toBe(true);

    const reaped = await answer(owner.client, 'session_kill', { session: spawned.session });
    expect(reaped).toEqual({ session: spawned.session, action: 'reaped', wasRunning: false });
    expect(existsSync(dir)).toBe(false);
    expect((await answer(owner.client, 'session_list')).sessions).toEqual([]);
    expect(await refusal(owner.client, 'session_kill', { session: spawned.session })).toContain('call session_list');
  });
});

describe('the checkout around the harness', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('writes nothing outside .ai/local over a spawn, send and kill cycle', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'opencode', cwd: 'src' } } }) });
    const owner = await scene.client(repo.root);
    const spawned = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:one', wait: true });
    await answer(owner.client, 'session_send', { session: spawned.session, prompt: 'sleep:600000' });
    await answer(owner.client, 'session_kill', { session: spawned.session });
    expect(existsSync(sessionDir(repo.root, spawned.session))).toBe(true);
    expect(await git(repo.root, ['status', '--porcelain', '--untracked-files=all', '--ignored=no'])).toBe('');
    const ignored = await git(repo.root, ['status', '--porcelain', '--untracked-files=all', '--ignored']);
    for (const line of ignored.split('\n').filter((l) => l !== '')) expect(line).toMatch(/^!! \.ai\/local\//);
    expect(ignored).toContain(`${HARNESS_RELATIVE}/${spawned.session}/turns/2/done.json`);
  });

  it('reaps the oldest finished session beyond max_sessions, and never a running one', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'gemini' } }, policy: { max_sessions: 2 } }) });
    const owner = await scene.client(repo.root);
    // The oldest of all, but running: never reaped.
    const running = (await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' })).session as string;
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await answer(owner.client, 'spawn', { profile: 'worker', prompt: `answer:number ${n}`, wait: true })).session);
    const [oldest, ...kept] = ids as [string, string, string];
    // Reaping follows the third turn's end: it leaves the table, then its directory goes.
    await waitFor(async () => (await answer(owner.client, 'session_list')).sessions.length === 3 && !existsSync(sessionDir(repo.root, oldest)), {
      what: 'the oldest finished session to be reaped',
      timeoutMs: 10_000,
    });
    const listed = (await answer(owner.client, 'session_list')).sessions.map((s: { session: string }) => s.session);
    expect(listed[0]).toBe(running);
    expect(listed.slice(1).sort()).toEqual([...kept].sort());
    for (const id of [running, ...kept]) expect(existsSync(sessionDir(repo.root, id))).toBe(true);
    expect(await refusal(owner.client, 'session_status', { session: oldest })).toContain('call session_list');
    expect(await answer(owner.client, 'session_kill', { session: running })).toMatchObject({ action: 'terminated' });
  });
});
