/**
 * The harness capabilities (HARNESS.md): list the nominated profiles, spawn a session, send it
 * follow-up turns (resume or steer), list, poll, read (tail, cursor, follow) and kill sessions,
 * and the session resources. They run where the session table lives (the harness thread of the
 * shared server); every one needs the lease's token over HTTP, queries included: transcripts hold
 * code and secrets.
 */
import { z } from 'zod';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';
import { MAX_PROMPT_BYTES } from '../harness/prepare.js';
import {
  KillAnswerSchema,
  LaunchAnswerSchema,
  ProfileListSchema,
  ReadAnswerSchema,
  ResourceAnswerSchema,
  SendAnswerSchema,
  SessionListSchema,
  SessionStatusSchema,
} from '../harness/schemas.js';
import { cancelMcpTask, mcpTaskState, type TaskAnswerShape } from '../tasks/mcp-tasks.js';
import { RESOURCE_PARTS, SESSION_PART_URI_TEMPLATE, SESSION_URI_TEMPLATE, SESSIONS_URI, TURN_PART_URI_TEMPLATE } from '../harness/resource-uris.js';

/**
 * The capabilities that answer the MCP tasks of spawn, session_send and run_task (a task names the
 * turn the call started; src/tasks/mcp-tasks.ts). The MCP projection calls them; no other surface.
 */
export const TURN_TASKS = Object.freeze({ state: 'harness.task_state', cancel: 'harness.task_cancel' });

/** The tools whose calls may run as a task, and the shape of the answer their task's result is. */
const TASK_SHAPES = { 'harness.spawn': 'spawn', 'harness.session_send': 'send', 'tasks.run_task': 'task' } as const satisfies Record<string, TaskAnswerShape>;
const taskTool = z.enum(Object.keys(TASK_SHAPES) as [keyof typeof TASK_SHAPES, ...Array<keyof typeof TASK_SHAPES>]).describe('The capability whose call created the task.');
const taskIdInput = z.string().min(1).max(200).describe('The task id, <session>:<turn>, as the task was created.');

const TurnTaskSchema = z.object({
  taskId: z.string(),
  status: z.enum(['working', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
});

const sessionId = z.string().max(64).describe('The session handle spawn answered (a UUID).');
const text = (max: number) => z.string().min(1).max(max);
const waitSeconds = z.number().int().min(1).max(3600);

/** One overlay of the profile: `{model: "opus"}`; only model, effort and mode are allowed. */
const overlay = z.record(z.string().max(64), z.string().max(200));
const withConfig = z
  .union([z.array(overlay).max(16), overlay])
  .optional()
  .describe(
    'Overlays of the profile for this session, as hyprpilot takes them: a list of objects folded in order, the later winning ([{"model": "opus"}, {"effort": "high"}]); one object is read as a list of one. Only model, effort and mode.',
  );

const launchFields = {
  prompt: z.string().max(MAX_PROMPT_BYTES).optional().describe('What the agent should do (exactly one of prompt and file).'),
  file: text(4096).optional().describe('A file inside the checkout (relative to its root) holding the prompt.'),
  mode: text(100).optional().describe('The agent\'s mode (claude: permission mode; codex: sandbox; gemini: approval mode; opencode: agent).'),
  wait: z.boolean().optional().describe('Wait for the turn to end, streaming each transcript line as a progress notification.'),
  timeout_seconds: waitSeconds.optional().describe('How long wait waits (default 45 s); the turn goes on after it.'),
};

export const listProfiles = capability({
  id: 'harness.list_profiles',
  kind: 'query',
  title: 'List agent profiles',
  description: 'The agent profiles this checkout nominates for the harness (claude, codex, gemini, opencode, executor), with any problem that would stop one from starting.',
  input: z.object({}).strict(),
  output: ProfileListSchema,
  exposure: { mcp: { tool: 'majordomus_list_profiles' }, http: { method: 'GET', path: '/api/v1/harness/profiles' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  guidance: 'Start other agents in this checkout: {tool} shows the profiles you may spawn.',
  handler: (_input, { harness }) => harness.listProfiles(),
});

export const spawnSession = capability({
  id: 'harness.spawn',
  kind: 'command',
  title: 'Spawn an agent session',
  description: 'Starts an agent session from a nominated profile with a prompt; with wait, follows its first turn to the end.',
  input: z
    .object({
      profile: text(200),
      ...launchFields,
      cwd: text(4096).optional().describe('Working directory relative to the checkout\'s root (default: the profile\'s, else the root).'),
      with_config: withConfig,
      args: z.array(z.string().max(4096)).max(64).optional().describe('Extra CLI arguments, appended to the profile\'s.'),
    })
    .strict(),
  output: LaunchAnswerSchema,
  effects: { openWorld: true },
  exposure: { mcp: { tool: 'majordomus_spawn', task: TURN_TASKS }, http: { method: 'POST', path: '/api/v1/harness/spawn' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  guidance: 'Spawn one with {tool} {profile, prompt}; every peer of the checkout sees the sessions.',
  handler: (input, { harness, caller }, call) => harness.spawn(input, call, caller),
});

export const sendSession = capability({
  id: 'harness.session_send',
  kind: 'command',
  title: 'Send a turn to a session',
  description: 'A follow-up turn that resumes the agent\'s own session; with steer, interrupts the running turn first.',
  input: z.object({ session: sessionId, ...launchFields, steer: z.boolean().optional().describe('Stop the running turn (SIGTERM, 5 s grace, SIGKILL) and start this one.') }).strict(),
  output: SendAnswerSchema,
  effects: { openWorld: true, destructive: true },
  exposure: { mcp: { tool: 'majordomus_session_send', task: TURN_TASKS }, http: { method: 'POST', path: '/api/v1/harness/sessions/send' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { harness }, call) => harness.send(input, call),
});

export const listSessions = capability({
  id: 'harness.session_list',
  kind: 'query',
  title: 'List sessions',
  description: 'Every agent session of the checkout, running ones first, then the most recent.',
  input: z.object({}).strict(),
  output: SessionListSchema,
  exposure: { mcp: { tool: 'majordomus_session_list', resource: SESSIONS_URI }, http: { method: 'GET', path: '/api/v1/harness/sessions' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  guidance: 'See every session (yours and other peers\') with {tool}.',
  handler: (_input, { harness }) => harness.list(),
});

export const sessionStatus = capability({
  id: 'harness.session_status',
  kind: 'query',
  title: 'Session status',
  description: 'The state of a session\'s turn (the latest by default), its files, and every turn with its outcome and the URI of its result; the cheap poll (it reads no transcript).',
  input: z.object({ session: sessionId, turn: z.number().int().min(1).optional() }).strict(),
  output: SessionStatusSchema,
  exposure: { mcp: { tool: 'majordomus_session_status', resource: SESSION_URI_TEMPLATE }, http: { method: 'GET', path: '/api/v1/harness/sessions/status' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { harness }) => harness.status(input),
});

export const readSession = capability({
  id: 'harness.session_read',
  kind: 'query',
  title: 'Read a transcript',
  description: 'A session\'s transcript lines: the tail of its latest turn, or from a cursor onwards (at most about 60 KB a read); with wait, follows it live until the turn ends.',
  input: z
    .object({
      session: sessionId,
      tail: z.number().int().min(1).max(10_000).optional().describe('Without a cursor: how many of the last lines (default 200).'),
      cursor: z.string().max(200).optional().describe('nextCursor of an earlier read, as given.'),
      wait: z.boolean().optional().describe('Follow: stream each new line as a progress notification until the turn ends, you cancel, or the deadline passes.'),
      timeout_seconds: waitSeconds.optional(),
    })
    .strict(),
  output: ReadAnswerSchema,
  exposure: { mcp: { tool: 'majordomus_session_read' }, http: { method: 'GET', path: '/api/v1/harness/sessions/read' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  guidance: 'Follow a session live with {tool} {session, wait: true}.',
  handler: (input, { harness }, call) => harness.read(input, call),
});

export const killSession = capability({
  id: 'harness.session_kill',
  kind: 'command',
  title: 'Kill a session',
  description: 'Stops a running session (SIGTERM to its process group, 5 s grace, SIGKILL); a finished one is reaped (its files removed).',
  input: z.object({ session: sessionId }).strict(),
  output: KillAnswerSchema,
  effects: { destructive: true },
  exposure: { mcp: { tool: 'majordomus_session_kill' }, http: { method: 'POST', path: '/api/v1/harness/sessions/kill' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { harness }) => harness.kill(input),
});

export const sessionResource = capability({
  id: 'harness.session_resource',
  kind: 'query',
  title: 'A session resource',
  description: 'One part of a session: its status (JSON), its result (the answer, or error: why), its latest transcript, or its stderr.',
  input: z.object({ session: sessionId, part: z.enum(RESOURCE_PARTS) }).strict(),
  output: ResourceAnswerSchema,
  exposure: { mcp: { resource: SESSION_PART_URI_TEMPLATE }, http: { method: 'GET', path: '/api/v1/harness/sessions/resource' } },
  stability: 'experimental',
  reads: 'harness',
  handler: (input, { harness }) => harness.resource(input),
});

/** A turn number as a URI segment (`…/turns/2/result`) or a number (REST, JSON). */
const turnNumber = z.union([z.int().min(1).max(999_999), z.string().max(6).regex(/^[1-9][0-9]*$/)]).describe('A turn of the session, 1-based.');

export const turnResource = capability({
  id: 'harness.turn_resource',
  kind: 'query',
  title: 'A turn\'s resource',
  description: 'One part of one turn of a session: its status (JSON, with that turn\'s files), its result, its transcript, or its stderr. An earlier turn\'s never change once it ended.',
  input: z.object({ session: sessionId, turn: turnNumber, part: z.enum(RESOURCE_PARTS) }).strict(),
  output: ResourceAnswerSchema,
  exposure: { mcp: { resource: TURN_PART_URI_TEMPLATE }, http: { method: 'GET', path: '/api/v1/harness/sessions/turns/resource' } },
  stability: 'experimental',
  reads: 'harness',
  handler: (input, { harness }) => harness.resource({ ...input, turn: Number(input.turn) }),
});

export const taskState = capability({
  id: 'harness.task_state',
  kind: 'query',
  title: 'An MCP task of a turn',
  description: 'The state of the MCP task a spawn, session_send or run_task created (it names the turn the call started), and, once the turn has ended and when asked, the answer the call gives for that turn; it may wait for the end first.',
  input: z
    .object({
      task: taskIdInput,
      tool: taskTool,
      result: z.boolean().optional().describe('Include the result once the task is terminal.'),
      wait_seconds: z.number().int().min(1).max(600).optional().describe('Wait this long for the turn to end first.'),
    })
    .strict(),
  output: z.object({ task: TurnTaskSchema, result: z.unknown().optional() }),
  exposure: {},
  stability: 'experimental',
  reads: 'harness',
  handler: (input, { harness, tasks }, call) =>
    mcpTaskState(harness, tasks, { task: input.task, shape: TASK_SHAPES[input.tool], result: input.result === true, ...(input.wait_seconds === undefined ? {} : { waitSeconds: input.wait_seconds }) }, call.signal),
});

export const taskCancel = capability({
  id: 'harness.task_cancel',
  kind: 'command',
  title: 'Cancel an MCP task of a turn',
  description: 'Stops the turn an MCP task names, if it still runs (never the session, never a later turn); answers the task and whether it stopped it.',
  input: z.object({ task: taskIdInput, tool: taskTool }).strict(),
  output: z.object({ task: TurnTaskSchema, stopped: z.boolean() }),
  exposure: {},
  stability: 'experimental',
  reads: 'harness',
  handler: (input, { harness, tasks }) => cancelMcpTask(harness, tasks, { task: input.task, shape: TASK_SHAPES[input.tool] }),
});

export const HARNESS_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([
  listProfiles,
  spawnSession,
  sendSession,
  listSessions,
  sessionStatus,
  readSession,
  killSession,
  sessionResource,
  turnResource,
  taskState,
  taskCancel,
]);
