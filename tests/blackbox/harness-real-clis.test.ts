/**
 * The real claude, codex and gemini CLIs driven through majordomus's harness, offline: a fixture
 * checkout nominates each CLI in a profile (`command` the installed CLI, `env` pointing it at a
 * scripted model API on loopback with a throwaway HOME), and an MCP client talks to the
 * checkout's `majordomus mcp` over stdio, as an orchestrating agent does. For each CLI:
 * - spawn with wait answers the scripted model's answer (answer and text), exited 0; the vendor's
 *   own session id is in the transcript only, never in a result, a resource or sessionInfo;
 * - session_send with wait resumes the vendor's session (turn 2, hidden in argv), answers the
 *   second reply, and the model's request for it carries the first turn's prompt and answer;
 * - a mode and an effort given at spawn reach the CLI (as it shows them: its init event, the
 *   model request) on the first turn and again on the resumed one;
 * - session_kill of a turn the model holds stops it on SIGTERM: terminated, status killed,
 *   `error: the turn was killed`, and no process of its group is left when the answer comes;
 * - session_read with wait follows a held turn live: its first lines arrive as progress
 *   notifications while the turn is held, the answer's lines once it is released, all before
 *   the result, which holds exactly the streamed lines.
 * And nothing the CLIs did changed the checkout's tracked files or left a process behind.
 *
 * The three CLIs run in parallel (one checkout, model API and server each); the steps of one CLI
 * run in order on its server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentEnvironment, DEFAULT_MODELS, DRIVABLE_AGENTS, installedAgentClis, INSTALL_TIMEOUT_MS, type DrivableAgent } from '../helpers/agent-clis.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import { conversationOf, startModelApi, type ModelApi, type RecordedRequest, type ScriptedReply } from '../helpers/model-api.js';
import { Scene } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

/** A turn takes 0.3–4 s on a quiet machine, up to ~8 s loaded (gemini): bounds far above that. */
const TURN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 3 * TURN_TIMEOUT_MS;

/** Dash-led and quoted: it must reach the model as written (codex after `--`, gemini `--prompt=`). */
const FIRST_PROMPT = '- Say "hello", please.';
const SECOND_PROMPT = 'Now say it again.';
const FIRST_ANSWER = 'Hello from the first turn of the scripted model.';
const SECOND_ANSWER = 'Hello again: this second turn remembers the first.';
const HELD_ANSWER = 'This answer was held back until the test let it go.';

/** One transcript line as the harness writes it. */
interface TranscriptLine {
  at: string;
  kind: string;
  text?: string;
  event: unknown;
}

type Event = Record<string, unknown>;

/** What the test knows of each CLI's own events (independently of the adapters). */
interface VendorEvents {
  /** The vendor's session id, from the event that announces it. */
  sessionId(events: Event[]): string | undefined;
  /** The turn's answer by the vendor's rule. */
  answer(events: Event[]): string | undefined;
  /** A mode (and an effort, where the CLI has one) other than the CLI's default. */
  settings: { mode: string; effort?: string };
  /**
   * What the CLI made of those settings, as it shows them: in its own events or in the model
   * request (the versions are pinned: tests/helpers/real-clients.versions).
   */
  settingsShown(events: Event[], request: RecordedRequest): { mode: boolean; effort?: boolean };
  /**
   * The exit code of a turn the CLI ended itself on SIGTERM (the group leader passes the CLI's
   * status on; one that needed SIGKILL has none).
   */
  stoppedExitCode: number;
}

const VENDOR_EVENTS: Record<DrivableAgent, VendorEvents> = {
  claude: {
    sessionId: (events) => stringField(events.find((e) => e.type === 'system' && e.subtype === 'init'), 'session_id'),
    answer: (events) => stringField(events.find((e) => e.type === 'result' && e.is_error === false), 'result'),
    settings: { mode: 'plan', effort: 'high' },
    settingsShown: (events, request) => ({
      mode: events.find((e) => e.type === 'system' && e.subtype === 'init')?.permissionMode === 'plan',
      effort: (bodyOf(request).output_config as Event | undefined)?.effort === 'high',
    }),
    stoppedExitCode: 143,
  },
  codex: {
    sessionId: (events) => stringField(events.find((e) => e.type === 'thread.started'), 'thread_id'),
    answer: (events) => {
      const messages = events.filter((e) => e.type === 'item.completed' && (e.item as { type?: string } | undefined)?.type === 'agent_message');
      return stringField(messages.at(-1)?.item as Event | undefined, 'text');
    },
    // `codex exec` runs read-only by default.
    settings: { mode: 'workspace-write', effort: 'high' },
    settingsShown: (_events, request) => ({
      mode: JSON.stringify(bodyOf(request)).includes('`sandbox_mode` is `workspace-write`'),
      effort: (bodyOf(request).reasoning as Event | undefined)?.effort === 'high',
    }),
    // Killed by the signal: the shell leading the group reports 128 + 15.
    stoppedExitCode: 143,
  },
  gemini: {
    sessionId: (events) => stringField(events.find((e) => e.type === 'init'), 'session_id'),
    answer: (events) => {
      const pieces = events.filter((e) => e.type === 'message' && e.role === 'assistant').map((e) => String(e.content));
      return pieces.length > 0 ? pieces.join('') : undefined;
    },
    // gemini has no effort (the adapter refuses one).
    settings: { mode: 'plan' },
    settingsShown: (_events, request) => ({ mode: JSON.stringify(bodyOf(request)).includes('Active Approval Mode: Plan') }),
    // It handles SIGTERM and exits 0, with neither answer nor error.
    stoppedExitCode: 0,
  },
};

function bodyOf(request: RecordedRequest): Event {
  return typeof request.body === 'object' && request.body !== null ? (request.body as Event) : {};
}

function stringField(event: Event | undefined, name: string): string | undefined {
  const value = event?.[name];
  return typeof value === 'string' ? value : undefined;
}

function parseLines(lines: readonly string[]): TranscriptLine[] {
  return lines.map((line) => JSON.parse(line) as TranscriptLine);
}

/** The CLI's own events of transcript lines (a line that was not JSON is left out). */
function eventsOf(lines: readonly string[]): Event[] {
  return parseLines(lines)
    .map((line) => line.event)
    .filter((event): event is Event => typeof event === 'object' && event !== null && !Array.isArray(event));
}

/** Every process whose process group is `pgid` ("pid state name"), from /proc. */
function groupMembers(pgid: number): string[] {
  const members: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    // The command name (field 2) may hold spaces and parentheses: count from its closing paren.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    if (Number(fields[2]) === pgid) members.push(`${name} ${fields[0]} ${stat.slice(stat.indexOf('(') + 1, close)}`);
  }
  return members;
}

interface ToolResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
}

/** A harness tool through the SDK client; an `isError` result fails the test with its text. */
async function tool<T = any>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (progress: Progress) => void,
): Promise<{ output: T; raw: ToolResult }> {
  const raw = (await client.callTool({ name: `majordomus_${name}`, arguments: args }, CallToolResultSchema, {
    timeout: TURN_TIMEOUT_MS,
    ...(onprogress === undefined ? {} : { onprogress, resetTimeoutOnProgress: true }),
  })) as ToolResult;
  expect(raw.isError ?? false, `${name}: ${JSON.stringify(raw.content)}`).toBe(false);
  return { output: raw.structuredContent as T, raw };
}

async function resourceText(client: Client, uri: string): Promise<string> {
  const read = await client.readResource({ uri });
  const first = read.contents[0] as { text?: string } | undefined;
  return first?.text ?? '';
}

beforeAll(async () => {
  await installedAgentClis();
}, INSTALL_TIMEOUT_MS);

describe.concurrent.each(DRIVABLE_AGENTS)('the real %s CLI through the harness', (agent) => {
  const vendor = VENDOR_EVENTS[agent];
  const profile = `real-${agent}`;
  const scene = new Scene();
  /** Every turn's group leader, to prove at the end that no group outlived the server. */
  const leaders = new Set<number>();
  /** The replies the next model requests get, in order; each test sets its own. */
  let replies: ScriptedReply[] = [];
  let api: ModelApi;
  let home: Awaited<ReturnType<typeof makeTempDir>> | undefined;
  let client: Client;

  beforeAll(async () => {
    api = await startModelApi({
      replies: (request) => {
        const reply = replies.shift();
        if (reply === undefined) throw new Error(`no reply scripted for ${request.path}`);
        return reply;
      },
    });
    home = await makeTempDir(`majordomus-${agent}-home-`);
    const environment = await agentEnvironment(agent, { home: home.path, modelApiUrl: api.url });
    // The CLI's environment: the throwaway HOME, XDG and TMPDIR, the vendor's variables, and a
    // PATH with the CLIs and this node on it (they are node scripts). Locale stays the server's.
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(environment.env)) {
      if (value !== undefined && !['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'SYSTEMROOT'].includes(name)) env[name] = value;
    }
    env.PATH = [environment.binDir, dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter);
    const nomination = { id: profile, agent, command: environment.command, model: environment.model, env, harness: { enabled: true } };
    const repo = await scene.repo({
      // JSON is YAML: the values (paths, URLs) need no quoting rules of their own.
      files: { [`.ai/repo/profiles/${profile}.yaml`]: `${JSON.stringify(nomination, null, 2)}\n`, 'README.md': '# A checkout\n' },
    });
    client = (await scene.client(repo.root, { name: `orchestrator-${agent}` })).client;
  }, TEST_TIMEOUT_MS);

  beforeEach(() => {
    replies = [];
  });

  afterAll(async () => {
    try {
      // The server first: it stops a turn still running, which may write to HOME as it goes.
      await scene.cleanup();
    } finally {
      await api?.stop();
      await home?.cleanup();
    }
    // The server ended every turn it ran, and each one's whole group with it.
    for (const pgid of leaders) expect(groupMembers(pgid), `the process group ${pgid} of a ${agent} turn`).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it.sequential(
    'lists the nominated profile with nothing in the way of starting it',
    async () => {
      const { output } = await tool(client, 'list_profiles', {});
      expect(output.profiles).toEqual([{ id: profile, agent, model: DEFAULT_MODELS[agent], isDefault: false }]);
    },
    TEST_TIMEOUT_MS,
  );

  it.sequential(
    'answers a spawned turn, resumes it with session_send, and never shows the vendor\'s session id',
    async () => {
      replies = [
        { kind: 'text', text: FIRST_ANSWER },
        { kind: 'text', text: SECOND_ANSWER },
      ];
      const before = api.modelRequests.length;

      const spawned = await tool(client, 'spawn', { profile, prompt: FIRST_PROMPT, wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 });
      const first = spawned.output;
      leaders.add(first.sessionInfo.pid);
      expect(first, JSON.stringify(first)).toMatchObject({ profile, agent, status: 'exited', exitCode: 0, turn: 1, timedOut: false, answer: FIRST_ANSWER, text: FIRST_ANSWER });
      expect(first.nextCursor).toBeUndefined();
      expect(first.sessionInfo).toMatchObject({ profile, agent, cwd: '.', promptBytes: Buffer.byteLength(FIRST_PROMPT) });
      expect(first.sessionInfo.argv[0]).toMatch(new RegExp(`/${agent}$`));
      expect(first.sessionInfo.env).toEqual(expect.arrayContaining(['HOME', 'PATH', 'MAJORDOMUS_SPAWN_DEPTH']));

      // The transcript is the CLI's own output: the only place the vendor's id appears.
      const read1 = await tool(client, 'session_read', { session: first.session });
      const events1 = eventsOf(read1.output.lines);
      const vendorId = vendor.sessionId(events1);
      expect(vendorId, read1.output.lines.join('\n')).toMatch(/^[0-9a-f-]{36}$/);
      expect(vendor.answer(events1)).toBe(FIRST_ANSWER);
      expect(read1.output.nextCursor).toBeUndefined();
      const id = vendorId as string;

      const sent = await tool(client, 'session_send', { session: first.session, prompt: SECOND_PROMPT, wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 });
      const second = sent.output;
      leaders.add(second.sessionInfo.pid);
      expect(second, JSON.stringify(second)).toMatchObject({
        session: first.session,
        delivery: 'resumed',
        status: 'exited',
        exitCode: 0,
        turn: 2,
        answer: SECOND_ANSWER,
        text: SECOND_ANSWER,
      });
      // The resume id went to the CLI, hidden from the argv shown.
      expect(second.sessionInfo.argv).toContain('<hidden>');

      // Turn 2 ran in the vendor's session that turn 1 started.
      const read2 = await tool(client, 'session_read', { session: first.session });
      expect(vendor.sessionId(eventsOf(read2.output.lines)), read2.output.lines.join('\n')).toBe(id);
      expect(vendor.answer(eventsOf(read2.output.lines))).toBe(SECOND_ANSWER);

      // The model saw turn 1's prompt and answer, in order, before turn 2's prompt.
      expect(api.problems).toEqual([]);
      const requests = api.modelRequests.slice(before);
      expect(requests.length, 'one model request a turn').toBe(2);
      const opening = conversationOf(requests[0]!);
      expect(opening.some((message) => message.role === 'user' && message.text.includes(FIRST_PROMPT)), JSON.stringify(opening)).toBe(true);
      const resumed = conversationOf(requests[1]!);
      const at = (role: string, text: string): number => resumed.findIndex((message) => message.role === role && message.text.includes(text));
      const positions = [at('user', FIRST_PROMPT), at('assistant', FIRST_ANSWER), at('user', SECOND_PROMPT)];
      expect(positions.every((position) => position >= 0), JSON.stringify(resumed.map((m) => [m.role, m.text.slice(0, 80)]))).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      // The profile sets no mode nor effort: the CLI's defaults, not the settings a later test gives.
      const unset = vendor.settings.effort === undefined ? { mode: false } : { mode: false, effort: false };
      expect(vendor.settingsShown(events1, requests[0]!)).toEqual(unset);

      // Every other answer about the session keeps the id to itself.
      const status = await tool(client, 'session_status', { session: first.session });
      expect(status.output).toMatchObject({ status: 'exited', turn: 2, turnFinished: true, hasResult: true, exitCode: 0 });
      expect(status.output.turns).toEqual([
        { turn: 1, status: 'exited', exitCode: 0, uri: `majordomus://sessions/${first.session}/turns/1/result` },
        { turn: 2, status: 'exited', exitCode: 0, uri: `majordomus://sessions/${first.session}/turns/2/result` },
      ]);
      const listed = await tool(client, 'session_list', {});
      expect(listed.output.sessions).toContainEqual(expect.objectContaining({ session: first.session, status: 'exited', exitCode: 0 }));
      const result = await resourceText(client, `majordomus://sessions/${first.session}/result`);
      expect(result).toBe(SECOND_ANSWER);
      const statusResource = await resourceText(client, `majordomus://sessions/${first.session}/status`);
      for (const [what, shown] of Object.entries({
        spawn: spawned.raw,
        send: sent.raw,
        status: status.raw,
        list: listed.raw,
        'the result resource': result,
        'the status resource': statusResource,
      })) {
        expect(JSON.stringify(shown), `${what} shows the vendor's session id`).not.toContain(id);
      }
      expect(JSON.stringify([first.sessionInfo, second.sessionInfo])).not.toContain(id);
    },
    TEST_TIMEOUT_MS,
  );

  it.sequential(
    'replays the launch\'s mode and effort when it resumes: the CLI takes them on both turns',
    async () => {
      replies = [
        { kind: 'text', text: FIRST_ANSWER },
        { kind: 'text', text: SECOND_ANSWER },
      ];
      const before = api.modelRequests.length;
      const { settings } = vendor;
      const expected = settings.effort === undefined ? { mode: true } : { mode: true, effort: true };

      // Each turn's lines, read while it is the latest (a read without a cursor tails the latest turn).
      const linesOfLatest = async (session: string): Promise<string[]> => (await tool(client, 'session_read', { session })).output.lines;
      const { output: first } = await tool(client, 'spawn', { profile, prompt: FIRST_PROMPT, with_config: settings, wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 });
      leaders.add(first.sessionInfo.pid);
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'exited', exitCode: 0, answer: FIRST_ANSWER, sessionInfo: settings });
      const firstLines = await linesOfLatest(first.session);
      const { output: second } = await tool(client, 'session_send', { session: first.session, prompt: SECOND_PROMPT, wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 });
      leaders.add(second.sessionInfo.pid);
      expect(second, JSON.stringify(second)).toMatchObject({ delivery: 'resumed', status: 'exited', exitCode: 0, turn: 2, answer: SECOND_ANSWER, sessionInfo: settings });
      const secondLines = await linesOfLatest(first.session);

      expect(api.problems).toEqual([]);
      const requests = api.modelRequests.slice(before);
      expect(requests.length, 'one model request a turn').toBe(2);
      expect(vendor.settingsShown(eventsOf(firstLines), requests[0]!), 'turn 1').toEqual(expected);
      expect(vendor.settingsShown(eventsOf(secondLines), requests[1]!), 'turn 2 (resumed)').toEqual(expected);
    },
    TEST_TIMEOUT_MS,
  );

  it.sequential(
    'kills a turn the model holds: SIGTERM ends it, it is recorded killed, and no process of its group is left',
    async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      replies = [{ kind: 'text', text: 'This answer is never sent.', holdUntil: held }];
      const before = api.modelRequests.length;
      try {
        const { output: spawned } = await tool(client, 'spawn', { profile, prompt: FIRST_PROMPT });
        const pgid = spawned.sessionInfo.pid as number;
        leaders.add(pgid);
        expect(spawned).toMatchObject({ status: 'running', turn: 1 });
        expect(spawned.answer).toBeUndefined();
        // The CLI is in the middle of its turn: its model request is waiting for the answer.
        await api.waitForModelRequests(before + 1, TURN_TIMEOUT_MS);
        expect(groupMembers(pgid).length, 'the turn\'s group runs').toBeGreaterThan(0);

        const { output: killed } = await tool(client, 'session_kill', { session: spawned.session });
        expect(killed).toEqual({ session: spawned.session, action: 'terminated', wasRunning: true });
        // When kill answers, the whole group has gone (the CLI and whatever it forked).
        expect(groupMembers(pgid)).toEqual([]);

        const { output: status } = await tool(client, 'session_status', { session: spawned.session });
        // SIGTERM was enough: the CLI ended itself within the grace, no SIGKILL needed.
        expect(status).toMatchObject({ status: 'killed', turn: 1, turnFinished: true, hasResult: false, exitCode: vendor.stoppedExitCode });
        expect(await resourceText(client, `majordomus://sessions/${spawned.session}/result`)).toBe('error: the turn was killed');
        const { output: listed } = await tool(client, 'session_list', {});
        expect(listed.sessions).toContainEqual(expect.objectContaining({ session: spawned.session, status: 'killed' }));
        expect(api.problems).toEqual([]);
      } finally {
        release();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it.sequential(
    'follows a held turn live: lines arrive as progress while it is held, the answer\'s once released, all before the result',
    async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      replies = [{ kind: 'text', text: HELD_ANSWER, holdUntil: held }];
      const before = api.modelRequests.length;
      try {
        const { output: spawned } = await tool(client, 'spawn', { profile, prompt: FIRST_PROMPT });
        leaders.add(spawned.sessionInfo.pid);
        expect(spawned.status).toBe('running');
        // A running turn's cursor is its start: following from it misses nothing printed so far.
        expect(typeof spawned.nextCursor).toBe('string');

        const progress: string[] = [];
        let answered = false;
        // The SDK hears a request's progress only until its response: what it heard came before.
        const following = tool(client, 'session_read', { session: spawned.session, cursor: spawned.nextCursor, wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 }, (note) => {
          if (typeof note.message === 'string') progress.push(note.message);
        }).finally(() => (answered = true));
        // Awaited below; a failure before that must not surface as an unhandled rejection.
        following.catch(() => undefined);

        // While the model holds its answer, the CLI's first lines (its session id) stream in.
        await api.waitForModelRequests(before + 1, TURN_TIMEOUT_MS);
        await waitFor(() => vendor.sessionId(eventsOf(progress)), { timeoutMs: TURN_TIMEOUT_MS, what: `a progress line with ${agent}'s session id` });
        expect(answered).toBe(false);
        expect(vendor.answer(eventsOf(progress))).toBeUndefined();
        const { output: midway } = await tool(client, 'session_status', { session: spawned.session });
        expect(midway).toMatchObject({ status: 'running', turnFinished: false });

        release();
        const { output: read } = await following;
        // Everything streamed came before the result, and the result holds exactly those lines.
        expect(read.lines).toEqual(progress);
        expect(vendor.answer(eventsOf(progress)), progress.join('\n')).toBe(HELD_ANSWER);
        expect(parseLines(progress).some((line) => line.kind === 'assistant')).toBe(true);
        expect(read.nextCursor).toBeUndefined();

        const { output: status } = await tool(client, 'session_status', { session: spawned.session });
        expect(status).toMatchObject({ status: 'exited', exitCode: 0, hasResult: true });
        expect(await resourceText(client, `majordomus://sessions/${spawned.session}/result`)).toBe(HELD_ANSWER);
        expect(api.problems).toEqual([]);
      } finally {
        release();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
