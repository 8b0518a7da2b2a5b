/**
 * HermitAgent's delegation tools over the harness (EXECUTOR.md): run_task, reply_task, check_task,
 * cancel_task — the MCP names HermitAgent uses, so skills written for it work unchanged — and the
 * gateway's usage. They run where the session table lives (the harness thread) and need the token
 * over HTTP: tasks carry code and answers.
 */
import { z } from 'zod';
import { MAX_PROMPT_BYTES } from '../harness/prepare.js';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';
import { TURN_TASKS } from './harness.js';
import { DEFAULT_MAX_TURNS } from '../tasks/board.js';
import { CancelAnswerSchema, TaskStateSchema, UsageSnapshotSchema } from '../tasks/schemas.js';

const taskId = z.string().min(1).max(64).describe('The task_id run_task answered.');
const waitFields = {
  wait: z.boolean().optional().describe('Wait for the turn to end (or to ask), streaming each transcript line as a progress notification.'),
  timeout_seconds: z.number().int().min(1).max(3600).optional().describe('How long wait waits (default 45 s); the task goes on after it.'),
};

export const runTask = capability({
  id: 'tasks.run_task',
  kind: 'command',
  title: 'Delegate a task to the executor',
  description:
    'Hands a coding task to the executor (a cheap model that reads, edits, runs commands and tests in this checkout, behind the gateway). Answers the task_id and its state; with wait, the result if it ends (or asks) in time.',
  input: z
    .object({
      task: z.string().min(1).max(MAX_PROMPT_BYTES).describe('What to do, with everything the executor needs to know: it sees only this and the checkout.'),
      cwd: z.string().min(1).max(4096).optional().describe('Working directory relative to the checkout\'s root.'),
      model: z.string().min(1).max(200).optional().describe('A model the gateway offers (strict: no other is used); absent: the gateway\'s priority chain.'),
      max_turns: z.number().int().min(1).max(10_000).optional().describe(`Model requests at most (default ${DEFAULT_MAX_TURNS}); past it the task ends max_turns.`),
      profile: z.string().min(1).max(200).optional().describe('The executor profile to run (default: the policy\'s default, else the first nominated executor profile).'),
      ...waitFields,
    })
    .strict(),
  output: TaskStateSchema,
  effects: { openWorld: true },
  exposure: { mcp: { tool: 'run_task', task: TURN_TASKS }, http: { method: 'POST', path: '/api/v1/tasks/run' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  guidance: 'Delegate mechanical work (read, edit, run the tests, fix) to a cheap model with {tool} {task}; you are told when it asks or ends.',
  handler: (input, { tasks, caller }, call) => tasks.run(input, caller, call),
});

export const replyTask = capability({
  id: 'tasks.reply_task',
  kind: 'command',
  title: 'Answer a task\'s question',
  description: 'Resumes a waiting task with the answer to its question; refused unless the task is waiting.',
  input: z.object({ task_id: taskId, message: z.string().min(1).max(MAX_PROMPT_BYTES), ...waitFields }).strict(),
  output: TaskStateSchema,
  effects: { openWorld: true },
  exposure: { mcp: { tool: 'reply_task' }, http: { method: 'POST', path: '/api/v1/tasks/reply' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { tasks }, call) => tasks.reply(input, call),
});

export const checkTask = capability({
  id: 'tasks.check_task',
  kind: 'query',
  title: 'A task\'s state',
  description: 'The state of a task: running, completed, waiting (with its question and options), max_turns, loop, error (with why) or cancelled; turns, last tool, token totals, what the gateway counted (with its cost where the models are priced), and the result (head and tail unless full).',
  input: z.object({ task_id: taskId, full: z.boolean().optional().describe('The whole result, not its head and tail.') }).strict(),
  output: TaskStateSchema,
  exposure: { mcp: { tool: 'check_task' }, http: { method: 'GET', path: '/api/v1/tasks/check' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { tasks }) => tasks.check(input),
});

export const cancelTask = capability({
  id: 'tasks.cancel_task',
  kind: 'command',
  title: 'Cancel a task',
  description: 'Stops a running task (or drops a waiting one): its state becomes cancelled. A task that has ended keeps its state.',
  input: z.object({ task_id: taskId }).strict(),
  output: CancelAnswerSchema,
  effects: { destructive: true },
  exposure: { mcp: { tool: 'cancel_task' }, http: { method: 'POST', path: '/api/v1/tasks/cancel' } },
  stability: 'experimental',
  reads: 'harness',
  delegation: true,
  handler: (input, { tasks }) => tasks.cancel(input),
});

export const gatewayUsage = capability({
  id: 'tasks.usage',
  kind: 'query',
  title: 'Model usage',
  description: 'What the gateway forwarded since the server started: requests, failures, failovers, tokens and, where the models are priced, cost (and what it saved against the reference price) — in total, by provider, by key and by task.',
  input: z.object({}).strict(),
  output: UsageSnapshotSchema,
  exposure: { mcp: { tool: 'majordomus_usage' }, http: { method: 'GET', path: '/api/v1/usage' } },
  stability: 'experimental',
  reads: 'harness',
  handler: (_input, { tasks }) => tasks.usageSnapshot(),
});

export const TASK_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([runTask, replyTask, checkTask, cancelTask, gatewayUsage]);
