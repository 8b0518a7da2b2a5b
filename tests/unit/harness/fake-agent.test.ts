/**
 * Each adapter against tests/fixtures/harness/fake-agent.mjs, spawned for real with the adapter's
 * argv and stdin, its stdout through TranscriptWriter and the adapter's parser:
 * - a first turn: the fake finds the prompt exactly (dash-led, quoted, multi-line), the model, the
 *   effort and the mode; the parser has the session id, the answer, the end (opencode has none);
 * - a resumed turn keeps the session id, and the fake was given it;
 * - an error ending, a crash without a terminal event, a character split across writes, and a
 *   stdout line past MAX_EVENT_BYTES come out as the harness needs them;
 * - codex takes a prompt too long for argv on stdin;
 * and the fake's own behaviours the harness tests rely on: it refuses the argv its CLI refuses,
 * waits for stdin's end, logs every invocation, ticks, floods, ignores SIGTERM, keeps a
 * grandchild in its process group, and can leave out the session id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_EVENT_BYTES, TranscriptWriter } from '../../../src/harness/transcript.js';
import type { AgentName } from '../../../src/harness/types.js';
import type { LaunchShape } from '../../../src/harness/vendors/adapter.js';
import { ARG_PROMPT_LIMIT } from '../../../src/harness/vendors/events.js';
import { adapterFor } from '../../../src/harness/vendors/index.js';
import { withoutCoverage } from '../../helpers/coverage-env.js';
import { isAlive, waitFor, withTimeout } from '../../helpers/wait.js';

const FAKE = fileURLToPath(new URL('../../fixtures/harness/fake-agent.mjs', import.meta.url));
const AGENTS: AgentName[] = ['claude', 'codex', 'gemini', 'opencode', 'executor'];
/** Settings each CLI can take (gemini and the executor have no effort). */
const SETTINGS: Record<AgentName, Partial<LaunchShape>> = {
  claude: { model: 'sonnet', effort: 'high', mode: 'plan' },
  codex: { model: 'gpt-5', effort: 'high', mode: 'read-only' },
  gemini: { model: 'gemini-2.5-flash', mode: 'plan' },
  opencode: { model: 'x/m1', effort: 'high', mode: 'plan' },
  executor: { model: 'qwen3-coder', mode: 'edit' },
};
const TRICKY = '- fix "the" test\n  then say  héllo 😀';

let dir: string;
let log: string;
let turns = 0;
const children: ChildProcess[] = [];
const strays: number[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'majordomus-fake-agent-'));
  log = join(dir, 'invocations.jsonl');
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close');
    }
  }
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** One line of FAKE_AGENT_LOG. */
interface Logged {
  argv: string[];
  cwd: string;
  stdin: string;
  env: string[];
  depth: string | null;
  prompt: string;
  promptFrom: string;
  resumeId: string | null;
  sessionId: string;
  model: string | null;
  effort: string | null;
  mode: string | null;
  cd: string | null;
}

function records(): Logged[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Logged);
}

/** `stdin` null closes it at once; undefined leaves it open. */
function start(agent: AgentName, args: string[], stdin: string | null | undefined, env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(FAKE, args, { cwd: dir, env: { ...withoutCoverage(process.env), FAKE_AGENT_VENDOR: agent, FAKE_AGENT_LOG: log, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  children.push(child);
  child.stdin?.on('error', () => undefined);
  if (stdin === null) child.stdin?.end();
  else if (stdin !== undefined) child.stdin?.end(stdin);
  return child;
}

/** One turn as the harness runs it: the adapter's argv and stdin, stdout through the writer and parser. */
async function turn(agent: AgentName, prompt: string, resumeId: string | null = null, settings: Partial<LaunchShape> = {}) {
  const adapter = adapterFor(agent);
  const invocation = adapter.invocation({ prompt, cwd: dir, args: [], ...settings }, resumeId);
  const parser = adapter.turnParser();
  const lines: string[] = [];
  turns += 1;
  const writer = new TranscriptWriter({ path: join(dir, `turn-${turns}.jsonl`), parser, onEntry: (line) => lines.push(line) });
  const child = start(agent, invocation.args, invocation.stdin);
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => writer.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await withTimeout(once(child, 'close'), 30_000, `fake ${agent} to exit`)) as [number | null];
  await writer.end();
  const entries = lines.map((line) => JSON.parse(line) as { kind: string; text?: string; event: unknown });
  return { parser, code, stderr, entries, record: records().at(-1) };
}

it('is an executable script with a node shebang', () => {
  accessSync(FAKE, constants.X_OK);
  expect(readFileSync(FAKE, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
});

describe.each(AGENTS)('the %s adapter against the fake %s CLI', (agent) => {
  it('runs a first turn: the prompt arrives exactly, settings on their flags, the answer and the session id come back', async () => {
    const settings = SETTINGS[agent];
    const { parser, code, stderr, record } = await turn(agent, TRICKY, null, settings);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(record?.prompt).toBe(TRICKY);
    expect(record?.resumeId).toBeNull();
    expect(record?.model).toBe(settings.model);
    expect(record?.effort).toBe(settings.effort ?? null);
    expect(record?.mode).toBe(settings.mode);
    expect(parser.vendorId).toBe(record?.sessionId);
    expect(parser.answer).toBe(TRICKY);
    expect(parser.ended).toBe(agent !== 'opencode');
    expect(parser.error).toBeNull();
  });

  it('resumes the same session: the fake is given the id and reports it again', async () => {
    const first = await turn(agent, 'answer:one');
    const id = first.parser.vendorId;
    expect(id).not.toBeNull();
    const second = await turn(agent, 'answer:two', id);
    expect(second.record?.resumeId).toBe(id);
    expect(second.parser.vendorId).toBe(id);
    expect(second.parser.answer).toBe('two');
  });

  it('reports an error ending, which the parser holds as the turn\'s error', async () => {
    const { parser, code } = await turn(agent, 'error:the model refused');
    expect(code).toBe(1);
    expect(parser.error).toBe('the model refused');
  });

  it('leaves a crash without a terminal event: not ended, no answer, the exit code says it', async () => {
    const { parser, code } = await turn(agent, 'crash:3');
    expect(code).toBe(3);
    expect(parser.ended).toBe(false);
    expect(parser.answer).toBeNull();
    expect(parser.error).toBeNull();
    expect(parser.vendorId).not.toBeNull();
  });

  it('decodes characters split across writes, and keeps an over-long stdout line as a truncated entry', async () => {
    const { parser, entries } = await turn(agent, `split-utf8 huge:${MAX_EVENT_BYTES + 10}\nanswer:ça coûte 5 € 😀`);
    expect(parser.answer).toBe('ça coûte 5 € 😀');
    const truncated = entries.find((e) => e.kind === 'other' && (e.event as { truncated?: boolean }).truncated === true);
    expect((truncated?.event as { bytes: number }).bytes).toBe(MAX_EVENT_BYTES + 9);
    expect(entries.some((e) => JSON.stringify(e).includes('\uFFFD'))).toBe(false);
  });
});

describe('codex prompts', () => {
  it('sends a prompt too long for one argument on stdin as `-`, and codex reads it', async () => {
    const prompt = `answer:long\n${'x'.repeat(ARG_PROMPT_LIMIT + 1)}`;
    const { parser, record } = await turn('codex', prompt);
    expect(record?.promptFrom).toBe('stdin');
    expect(record?.prompt).toBe(prompt);
    expect(record?.argv.at(-1)).toBe('-');
    expect(parser.answer).toBe('long');
  });

  it('keeps a prompt reading `resume` a prompt, and runs in -C', async () => {
    const { parser, record } = await turn('codex', 'resume');
    expect(record?.resumeId).toBeNull();
    expect(record?.cd).toBe(dir);
    expect(parser.answer).toBe('resume');
  });
});

describe('the fake CLIs refuse what the real ones refuse', () => {
  async function refusal(agent: AgentName, args: string[], stdin: string | null = 'hi') {
    // Whatever trusts gemini workspaces on this machine does not count here.
    const child = start(agent, args, stdin, { GEMINI_CLI_TRUST_WORKSPACE: undefined });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await withTimeout(once(child, 'close'), 30_000, 'the fake to exit')) as [number];
    return { code, stderr: stderr.trim() };
  }

  it('gemini reads a dash-led prompt after -p as flags, and will not run in an untrusted folder', async () => {
    expect(await refusal('gemini', ['--output-format', 'stream-json', '--skip-trust', '-p', '- list'], null)).toEqual({ code: 1, stderr: 'Not enough arguments following: p' });
    const untrusted = await refusal('gemini', ['--output-format', 'stream-json', '--prompt=hi'], null);
    expect(untrusted.code).toBe(55);
    expect(untrusted.stderr).toMatch(/^Gemini CLI is not running in a trusted directory/);
  });

  it('claude needs --verbose for stream-json, codex --skip-git-repo-check outside a repository', async () => {
    expect(await refusal('claude', ['-p', '--output-format', 'stream-json'])).toEqual({ code: 1, stderr: 'Error: When using --print, --output-format=stream-json requires --verbose' });
    expect(await refusal('codex', ['exec', '--json', '-C', dir, '--', 'hi'], null)).toEqual({ code: 1, stderr: 'Not inside a trusted directory and --skip-git-repo-check was not specified.' });
  });

  it('opencode and the executor need their JSON output, and an unknown vendor is named', async () => {
    expect(await refusal('opencode', ['run'])).toEqual({ code: 1, stderr: 'fake opencode: --format json is required' });
    expect(await refusal('executor', ['exec'])).toEqual({ code: 2, stderr: 'fake executor: --json is required' });
    expect((await refusal('nobody' as AgentName, [])).code).toBe(64);
  });
});

describe('the fake agent for harness tests', () => {
  const executorArgs = ['exec', '--json'];

  it('waits for stdin to end before it answers, and logs argv, cwd, env names and the spawn depth', async () => {
    const child = start('executor', executorArgs, undefined, { MAJORDOMUS_SPAWN_DEPTH: '2', FAKE_SECRET_VALUE: 'hunter2' });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stdin?.write('answer:late');
    // Still open: nothing logged, nothing printed. The tick of a live fake proves time passed.
    await withTimeout(
      (async () => {
        const probe = start('executor', executorArgs, 'lines:2:100 answer:probe');
        await once(probe, 'close');
      })(),
      30_000,
      'a probe turn',
    );
    expect(out).toBe('');
    child.stdin?.end();
    await withTimeout(once(child, 'close'), 30_000, 'the fake to answer');
    expect(out).toContain('"answer":"late"');
    const record = records().find((r) => r.prompt === 'answer:late');
    expect(record).toMatchObject({ argv: executorArgs, cwd: dir, stdin: 'answer:late', depth: '2', promptFrom: 'stdin' });
    expect(record?.env).toContain('FAKE_SECRET_VALUE');
    expect(JSON.stringify(record)).not.toContain('hunter2');
  });

  it('prints timestamped ticks, floods at a rate, and writes stderr', async () => {
    const before = performance.timeOrigin + performance.now();
    const { entries, stderr } = await turn('executor', 'lines:3:20 flood:40000:0.3 stderr:to stderr');
    const ticks = entries.filter((e) => (e.event as { type?: string }).type === 'tick').map((e) => (e.event as { at: number }).at);
    expect(ticks).toHaveLength(3);
    expect(ticks[0]).toBeGreaterThanOrEqual(before);
    expect(ticks[2]).toBeGreaterThan(ticks[0] as number);
    const flood = entries.filter((e) => (e.event as { type?: string }).type === 'flood');
    expect(flood.length).toBeGreaterThan(5);
    expect(stderr).toBe('to stderr\n');
  });

  it('ignores SIGTERM when told to, and keeps a grandchild in its own process group', async () => {
    const pidfile = join(dir, 'grandchild.pid');
    const child = start('executor', executorArgs, 'ignore-term grandchild lines:3:150', { FAKE_AGENT_PIDFILE: pidfile });
    let ticks = 0;
    child.stdout?.on('data', (chunk: Buffer) => (ticks += chunk.toString().split('"type":"tick"').length - 1));
    await waitFor(() => ticks >= 1, { what: 'the first tick' });
    const grandchild = Number(await waitFor(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8'), { what: 'the grandchild pid' }));
    strays.push(grandchild);
    expect(isAlive(grandchild)).toBe(true);
    const pgrp = readFileSync(`/proc/${grandchild}/stat`, 'utf8').split(') ')[1]?.split(' ')[2];
    expect(Number(pgrp)).toBe(child.pid);
    child.kill('SIGTERM');
    await waitFor(() => ticks >= 3, { what: 'ticks after SIGTERM' });
    expect(child.exitCode).toBeNull();
    process.kill(-(child.pid as number), 'SIGKILL');
    await withTimeout(once(child, 'close'), 30_000, 'the group to die');
    await waitFor(() => !isAlive(grandchild), { what: 'the grandchild to die with its group' });
  });

  it('can leave out the session id, so the turn cannot be resumed', async () => {
    const { parser } = await turn('claude', 'no-session answer:anonymous');
    expect(parser.vendorId).toBeNull();
    expect(parser.answer).toBe('anonymous');
  });
});
