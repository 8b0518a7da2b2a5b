/**
 * The real agent CLIs (tests/helpers/real-clients.versions) run whole turns offline against the
 * scripted model API, as the harness drives them (the design's "Driving each offline"). For
 * claude, codex and gemini:
 * - a first turn prints the vendor's session id and the scripted answer, and exits 0;
 * - a resumed second turn reports the same session id, answers the second reply, and its model
 *   request carries the first turn's prompt and answer before the new prompt (resume works);
 * - a turn in which the model calls a tool: the CLI runs it and sends the result back;
 * - a turn whose answer is held back has printed its session id already (what steer needs);
 * - a turn stopped by SIGTERM to its group mid-answer prints neither answer nor failure, exits
 *   its own way, and its session resumes with the interrupted prompt in the conversation;
 * - a model API error ends the turn with the vendor's failure event naming the message;
 * - the CLIs call no endpoint but the model's, write nothing into the working directory, and
 *   leave no process of a turn's group behind.
 *
 * The argv below is the shape the vendor adapters use. With RECORD_VENDOR_EVENTS=1 the test also
 * writes what each turn printed to tests/fixtures/harness/vendor-events/ (the adapters' parser
 * fixtures): run it so after a version change.
 */
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  agentEnvironment,
  DRIVABLE_AGENTS,
  installedAgentClis,
  INSTALL_TIMEOUT_MS,
  killAgentTurns,
  startAgentTurn,
  type AgentTurn,
  type AgentTurnResult,
  type DrivableAgent,
} from '../helpers/agent-clis.js';
import { conversationOf, startModelApi, type ModelApi, type ModelReply, type ReplyScript } from '../helpers/model-api.js';
import { waitFor } from '../helpers/wait.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/harness/vendor-events', import.meta.url));
const RECORD = process.env.RECORD_VENDOR_EVENTS === '1';
/** Generous: one turn takes about 1 s (claude, codex) to 4 s (gemini) here, on a quiet machine. */
const TURN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 3 * TURN_TIMEOUT_MS;

const FIRST_PROMPT = 'Say hello, please.';
const SECOND_PROMPT = 'Now say it again.';
const FIRST_ANSWER = 'Hello from the first turn of the scripted model.';
const SECOND_ANSWER = 'Hello again: this second turn remembers the first.';

interface TurnShape {
  prompt: string;
  /** Give the prompt on stdin rather than in argv. */
  promptOnStdin: boolean;
  cwd: string;
  model: string;
  resumeId: string | null;
}

interface Vendor {
  /** argv and stdin of one turn. */
  invocation(turn: TurnShape): { args: string[]; stdin: string | null };
  /** The vendor's session id from the turn's events. */
  sessionId(events: Record<string, unknown>[]): string | undefined;
  /** The turn's answer by the vendor's rule. */
  answer(events: Record<string, unknown>[]): string | undefined;
  /** The message of the event that reports a failed turn. */
  failure(events: Record<string, unknown>[]): string | undefined;
  /** A tool of the CLI that reads a file, called with the path (absolute, inside cwd). */
  readFileCall(path: string, cwd: string): ModelReply;
  /** The events that show the CLI running the tool and its result (event type names). */
  toolEvents(events: Record<string, unknown>[]): string[];
}

const VENDORS: Record<DrivableAgent, Vendor> = {
  claude: {
    invocation: ({ prompt, resumeId }) => ({
      args: ['-p', '--output-format', 'stream-json', '--verbose', ...(resumeId ? ['--resume', resumeId] : [])],
      stdin: prompt,
    }),
    sessionId: (events) => stringField(events.find((e) => e.type === 'system' && e.subtype === 'init'), 'session_id'),
    answer: (events) => stringField(events.find((e) => e.type === 'result' && e.is_error === false), 'result'),
    // A failed turn's result still has subtype "success": is_error tells.
    failure: (events) => stringField(events.find((e) => e.type === 'result' && e.is_error === true), 'result'),
    readFileCall: (path) => ({ kind: 'tool_call', name: 'Read', input: { file_path: path } }),
    toolEvents: (events) =>
      events.flatMap((e) => {
        const content = (e.message as { content?: { type?: string }[] } | undefined)?.content ?? [];
        return content.filter((block) => block.type === 'tool_use' || block.type === 'tool_result').map((block) => `${String(e.type)}:${block.type}`);
      }),
  },
  codex: {
    // -C belongs to `exec`: after `resume` it is refused ("unexpected argument '-C'").
    invocation: ({ prompt, promptOnStdin, cwd, resumeId }) => ({
      args: [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '-C',
        cwd,
        ...(resumeId ? ['resume', resumeId] : []),
        ...(promptOnStdin ? (resumeId ? ['-'] : []) : [prompt]),
      ],
      stdin: promptOnStdin ? prompt : null,
    }),
    sessionId: (events) => stringField(events.find((e) => e.type === 'thread.started'), 'thread_id'),
    answer: (events) => {
      const messages = events.filter((e) => e.type === 'item.completed' && (e.item as { type?: string } | undefined)?.type === 'agent_message');
      return stringField(messages.at(-1)?.item as Record<string, unknown> | undefined, 'text');
    },
    failure: (events) => stringField(events.find((e) => e.type === 'turn.failed')?.error as Record<string, unknown> | undefined, 'message'),
    readFileCall: (path, cwd) => ({ kind: 'tool_call', name: 'exec_command', input: { cmd: `cat ${path.slice(cwd.length + 1)}` } }),
    toolEvents: (events) =>
      events
        .filter((e) => (e.item as { type?: string } | undefined)?.type === 'command_execution')
        .map((e) => `${String(e.type)}:${String((e.item as { status?: string }).status)}`),
  },
  gemini: {
    invocation: ({ prompt, promptOnStdin, model, resumeId }) => ({
      args: ['-p', promptOnStdin ? '' : prompt, '--output-format', 'stream-json', '-m', model, ...(resumeId ? ['--resume', resumeId] : [])],
      stdin: promptOnStdin ? prompt : null,
    }),
    sessionId: (events) => stringField(events.find((e) => e.type === 'init'), 'session_id'),
    answer: (events) => {
      const pieces = events.filter((e) => e.type === 'message' && e.role === 'assistant').map((e) => String(e.content));
      return pieces.length > 0 ? pieces.join('') : undefined;
    },
    failure: (events) => stringField(events.find((e) => e.type === 'result' && e.status === 'error')?.error as Record<string, unknown> | undefined, 'message'),
    readFileCall: (path) => ({ kind: 'tool_call', name: 'read_file', input: { file_path: path } }),
    toolEvents: (events) => events.filter((e) => e.type === 'tool_use' || e.type === 'tool_result').map((e) => `${String(e.type)}:${String(e.status ?? e.tool_name)}`),
  },
};

const EXPECTED_TOOL_EVENTS: Record<DrivableAgent, string[]> = {
  claude: ['assistant:tool_use', 'user:tool_result'],
  codex: ['item.started:in_progress', 'item.completed:completed'],
  gemini: ['tool_use:read_file', 'tool_result:success'],
};

/** How each CLI exits on SIGTERM in the middle of a turn. */
const STOPPED_EXIT: Record<DrivableAgent, { code: number | null; signal: NodeJS.Signals | null }> = {
  claude: { code: 143, signal: null },
  codex: { code: null, signal: 'SIGTERM' },
  gemini: { code: 0, signal: null },
};

function stringField(event: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = event?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** The turn's stdout as JSON events; a line that is not JSON fails the test with the output. */
function eventsOf(result: Pick<AgentTurnResult, 'stdout' | 'stderr'>): Record<string, unknown>[] {
  return result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`a stdout line is not JSON: ${line}\nstderr:\n${result.stderr}`);
      }
    });
}

/** The whole lines printed so far, as events (the last line may still be on its way). */
function printedEvents(stdout: string): Record<string, unknown>[] {
  return eventsOf({ stdout: stdout.slice(0, stdout.lastIndexOf('\n') + 1), stderr: '' });
}

function describeTurn(result: AgentTurnResult): string {
  return `exit ${result.code ?? result.signal}${result.timedOut ? ' (timed out)' : ''} after ${result.ms} ms\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}

/** True while any process of the group led by `pid` exists. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function record(name: string, result: AgentTurnResult): Promise<void> {
  if (!RECORD) return;
  await mkdir(FIXTURES, { recursive: true });
  await writeFile(join(FIXTURES, name), result.stdout);
}

let api: ModelApi | null = null;
let scratch: string | null = null;

beforeAll(async () => {
  await installedAgentClis();
}, INSTALL_TIMEOUT_MS);

afterEach(async () => {
  killAgentTurns();
  await api?.stop();
  api = null;
  if (scratch) await rm(scratch, { recursive: true, force: true, maxRetries: 3 });
  scratch = null;
});

/** A model API with `replies`, a throwaway HOME set up for `agent`, and an empty project. */
async function setUp(agent: DrivableAgent, replies: ReplyScript) {
  scratch = await realpath(await mkdtemp(join(tmpdir(), `majordomus-${agent}-`)));
  const home = join(scratch, 'home');
  const cwd = join(scratch, 'project');
  await mkdir(home);
  await mkdir(cwd);
  api = await startModelApi({ replies });
  const environment = await agentEnvironment(agent, { home, modelApiUrl: api.url });
  type Shape = Omit<TurnShape, 'cwd' | 'model'>;
  const start = (shape: Shape, onStdout?: (chunk: string) => void): AgentTurn => {
    const { args, stdin } = VENDORS[agent].invocation({ ...shape, cwd, model: environment.model });
    return startAgentTurn(environment.command, args, { cwd, env: environment.env, stdin, timeoutMs: TURN_TIMEOUT_MS, onStdout });
  };
  /** Waits for a turn's exit; nothing of its process group outlives it (no daemon, no helper). */
  const finish = async (running: AgentTurn): Promise<AgentTurnResult> => {
    const result = await running.done;
    expect(result.timedOut, describeTurn(result)).toBe(false);
    await waitFor(() => !groupAlive(result.pid), { timeoutMs: 10_000, what: `the process group of ${agent} to end` });
    return result;
  };
  const run = (shape: Shape): Promise<AgentTurnResult> => finish(start(shape));
  /** Runs a turn that must succeed. */
  const turn = async (shape: Shape) => {
    const result = await run(shape);
    expect(result.code, describeTurn(result)).toBe(0);
    return result;
  };
  return { api, cwd, start, finish, run, turn };
}

describe.each(DRIVABLE_AGENTS)('the real %s CLI against the scripted model API', (agent) => {
  const vendor = VENDORS[agent];

  it(
    'answers a first turn, then resumes the session for a second turn that carries the first',
    async () => {
      const { api, cwd, turn } = await setUp(agent, [
        { kind: 'text', text: FIRST_ANSWER },
        { kind: 'text', text: SECOND_ANSWER },
      ]);

      const first = await turn({ prompt: FIRST_PROMPT, promptOnStdin: agent === 'claude', resumeId: null });
      await record(`${agent}-turn1.jsonl`, first);
      const firstEvents = eventsOf(first);
      const sessionId = vendor.sessionId(firstEvents);
      expect(sessionId, describeTurn(first)).toMatch(/^[0-9a-f-]{36}$/);
      expect(vendor.answer(firstEvents), describeTurn(first)).toBe(FIRST_ANSWER);

      const second = await turn({ prompt: SECOND_PROMPT, promptOnStdin: agent === 'claude', resumeId: sessionId ?? null });
      await record(`${agent}-turn2.jsonl`, second);
      const secondEvents = eventsOf(second);
      expect(vendor.sessionId(secondEvents), describeTurn(second)).toBe(sessionId);
      expect(vendor.answer(secondEvents), describeTurn(second)).toBe(SECOND_ANSWER);

      // Only model requests, one per turn, each answered from the script.
      expect(api.problems).toEqual([]);
      expect(api.requests.map((request) => request.api)).toEqual([expect.any(String), expect.any(String)]);
      const [firstRequest, secondRequest] = api.modelRequests;
      const before = conversationOf(firstRequest!);
      expect(before.some((message) => message.role === 'user' && message.text.includes(FIRST_PROMPT))).toBe(true);
      expect(before.some((message) => message.text.includes(FIRST_ANSWER))).toBe(false);

      // The resumed request carries the first turn, in order, before the new prompt.
      const after = conversationOf(secondRequest!);
      const at = (role: string, text: string): number => after.findIndex((message) => message.role === role && message.text.includes(text));
      const positions = [at('user', FIRST_PROMPT), at('assistant', FIRST_ANSWER), at('user', SECOND_PROMPT)];
      expect(positions.every((position) => position >= 0), JSON.stringify(after.map((m) => [m.role, m.text.slice(0, 80)]))).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);

      // The CLIs keep their state in HOME: the project is as it was.
      expect(await readdir(cwd)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'runs a tool the model calls and sends its result back before answering',
    async () => {
      const { api, cwd, turn } = await setUp(agent, []);
      const notes = join(cwd, 'notes.txt');
      await writeFile(notes, 'the secret word is marmalade\n');
      api.enqueue(vendor.readFileCall(notes, cwd), { kind: 'text', text: 'The secret word is marmalade.' });

      const result = await turn({ prompt: 'What is the secret word in notes.txt?', promptOnStdin: true, resumeId: null });
      await record(`${agent}-tool-turn.jsonl`, result);
      const events = eventsOf(result);
      expect(vendor.toolEvents(events), describeTurn(result)).toEqual(EXPECTED_TOOL_EVENTS[agent]);
      expect(vendor.answer(events), describeTurn(result)).toBe('The secret word is marmalade.');

      expect(api.problems).toEqual([]);
      expect(api.modelRequests).toHaveLength(2);
      const conversation = conversationOf(api.modelRequests[1]!);
      const last = conversation.slice(-2);
      expect(last[0]).toMatchObject({ role: 'assistant', text: expect.stringContaining('tool_call') });
      expect(last[1]).toMatchObject({ role: 'tool', text: expect.stringContaining('the secret word is marmalade') });
      expect(await readdir(cwd)).toEqual(['notes.txt']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'prints its session id while the model is still answering, and ends the turn when the answer comes',
    async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const { api, start, finish } = await setUp(agent, [{ kind: 'text', text: FIRST_ANSWER, holdUntil: held }]);
      let stdout = '';
      const running = start({ prompt: FIRST_PROMPT, promptOnStdin: agent === 'claude', resumeId: null }, (chunk) => (stdout += chunk));
      try {
        await api.waitForModelRequests(1, TURN_TIMEOUT_MS);
        const sessionId = await waitFor(() => vendor.sessionId(printedEvents(stdout)), { timeoutMs: 30_000, what: `${agent} to print its session id` });
        expect(vendor.answer(printedEvents(stdout))).toBeUndefined();
        release();
        const result = await finish(running);
        expect(result.code, describeTurn(result)).toBe(0);
        expect(vendor.sessionId(eventsOf(result))).toBe(sessionId);
        expect(vendor.answer(eventsOf(result))).toBe(FIRST_ANSWER);
      } finally {
        release();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'resumes a session whose turn was stopped mid-answer by SIGTERM to its group, carrying the interrupted prompt',
    async () => {
      let release: () => void = () => {};
      const never = new Promise<void>((resolve) => (release = resolve));
      const { api, start, finish, turn } = await setUp(agent, [
        { kind: 'text', text: 'This answer is never sent.', holdUntil: never },
        { kind: 'text', text: SECOND_ANSWER },
      ]);
      let stdout = '';
      try {
        const running = start({ prompt: FIRST_PROMPT, promptOnStdin: agent === 'claude', resumeId: null }, (chunk) => (stdout += chunk));
        await api.waitForModelRequests(1, TURN_TIMEOUT_MS);
        const sessionId = await waitFor(() => vendor.sessionId(printedEvents(stdout)), { timeoutMs: 30_000, what: `${agent} to print its session id` });
        running.signalGroup('SIGTERM');
        const stopped = await finish(running);
        await record(`${agent}-stopped-turn.jsonl`, stopped);
        // Neither an answer nor a failure: the turn just ends (gemini even exits 0).
        expect(vendor.answer(eventsOf(stopped)), describeTurn(stopped)).toBeUndefined();
        expect(vendor.failure(eventsOf(stopped)), describeTurn(stopped)).toBeUndefined();
        expect(STOPPED_EXIT[agent], describeTurn(stopped)).toEqual({ code: stopped.code, signal: stopped.signal });

        const resumed = await turn({ prompt: SECOND_PROMPT, promptOnStdin: agent === 'claude', resumeId: sessionId });
        expect(vendor.sessionId(eventsOf(resumed))).toBe(sessionId);
        expect(vendor.answer(eventsOf(resumed)), describeTurn(resumed)).toBe(SECOND_ANSWER);
        const conversation = conversationOf(api.modelRequests[1]!);
        const where = (text: string): number => conversation.findIndex((message) => message.role === 'user' && message.text.includes(text));
        expect(where(FIRST_PROMPT), JSON.stringify(conversation.map((m) => [m.role, m.text.slice(-80)]))).toBeGreaterThanOrEqual(0);
        expect(where(SECOND_PROMPT)).toBeGreaterThanOrEqual(where(FIRST_PROMPT));
        expect(conversation.some((message) => message.text.includes('never sent'))).toBe(false);
      } finally {
        release();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'reports a model request the API refuses as a failed turn that names the API\'s message',
    async () => {
      // 400 ends the turn at once in all three (claude re-sends it with fewer betas first).
      const message = 'the scripted model API refuses this request';
      const { api, run } = await setUp(agent, () => ({ kind: 'error', status: 400, message }));

      const result = await run({ prompt: FIRST_PROMPT, promptOnStdin: true, resumeId: null });
      await record(`${agent}-error-turn.jsonl`, result);
      expect(result.code, describeTurn(result)).not.toBe(0);
      const events = eventsOf(result);
      expect(vendor.failure(events), describeTurn(result)).toContain(message);
      expect(vendor.answer(events), describeTurn(result)).toBeUndefined();
      expect(api.problems).toEqual([]);
      expect(api.modelRequests.length).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );
});
