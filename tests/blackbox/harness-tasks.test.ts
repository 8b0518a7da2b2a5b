/**
 * MCP tasks (protocol 2025-11-25) over the harness — black-box, with the built executable in
 * temporary git repositories whose profiles run the fake agent CLI; the MCP SDK client's
 * experimental task API on stdio and through a bridge, raw JSON-RPC over `/mcp`. Covers:
 * - a session on 2025-11-25 is told `tasks` (list, cancel, tools/call) and sees
 *   `execution.taskSupport: "optional"` on spawn, session_send and run_task only; one on
 *   2025-06-18 gets neither, its `params.task` is ignored (the call answers as always) and the
 *   `tasks/*` methods do not exist (-32601);
 * - spawn as a task: created once the turn runs (`<session>:1`, working, ttl null, a poll
 *   interval, the call's first answer in `_meta`), `notifications/tasks/status` when it ends,
 *   `tasks/result` exactly the synchronous answer (with `_meta` naming the task), the same bytes
 *   after later turns; `tasks/list` names the session's own tasks;
 * - a task names one turn: session_send's is `<session>:2` (delivery resumed); `tasks/cancel`
 *   stops that turn (cancelled), never the session (still listed, earlier turns readable); a
 *   finished task is not cancelled (-32602) and a later turn is left running;
 * - run_task as a task: its result is the task's state at that turn;
 * - through a bridge, and over `/mcp` (tasks/result blocking on a POST); another session does
 *   not see a task (-32602);
 * - refusals: a spawn refused before its turn starts is a JSON-RPC error and no task; a tool
 *   without task support is -32601; an unknown task and one whose session was reaped are -32602.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, harnessFiles, status, waitForTurnEnd } from '../helpers/harness.js';
import { leaseToken } from '../helpers/serve.js';
import { ATTACHED, openHttpSession, Scene, SERVING_HTTP, waitForLog, type SharedClient } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const TASK_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

interface Notice {
  method: string;
  params?: any;
}

function collect(client: SharedClient): Notice[] {
  const notices: Notice[] = [];
  client.client.fallbackNotificationHandler = async (notification) => {
    notices.push(notification as Notice);
  };
  return notices;
}

/** A tools/call asking for a task, through the SDK client: the CreateTaskResult. */
async function startTask(client: Client, tool: string, args: Record<string, unknown>): Promise<{ task: any; _meta?: any }> {
  return client.request({ method: 'tools/call', params: { name: tool, arguments: args, task: {} } }, CreateTaskResultSchema, { timeout: 60_000 });
}

async function rpcError(run: () => Promise<unknown>): Promise<McpError> {
  const caught = await run().then(
    () => null,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(McpError);
  return caught as McpError;
}

const files = harnessFiles({ profiles: { worker: { agent: 'claude' }, executor: { agent: 'executor' } } });

describe('MCP tasks of the harness', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('declares tasks on 2025-11-25 only, with spawn, session_send and run_task as optional tasks', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    expect(owner.client.getServerCapabilities()?.tasks).toEqual(TASK_CAPABILITY);
    const tools = (await owner.client.listTools()).tools;
    expect(tools.filter((t) => t.execution !== undefined).map((t) => [t.name, t.execution])).toEqual([
      ['majordomus_session_send', { taskSupport: 'optional' }],
      ['majordomus_spawn', { taskSupport: 'optional' }],
      ['run_task', { taskSupport: 'optional' }],
    ]);

    // A client on 2025-06-18 (as RawMcp initializes) gets the protocol it agreed.
    const raw = scene.raw(repo.root);
    const init = await raw.initialize('older');
    expect(init.result.capabilities.tasks).toBeUndefined();
    expect(((await raw.request('tools/list')).result.tools as Array<{ execution?: unknown }>).some((t) => t.execution !== undefined)).toBe(false);
    expect((await raw.request('tasks/list')).error?.code).toBe(-32601);
    const plain = await raw.request('tools/call', { name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'answer:as always', wait: true }, task: {} });
    expect(plain.result.structuredContent).toMatchObject({ status: 'exited', answer: 'as always' });
  });

  it('runs spawn as a task: created when the turn runs, told when it ends, its result the synchronous answer for good', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    await owner.client.listTools();
    const notices = collect(owner);

    const created = await startTask(owner.client, 'majordomus_spawn', { profile: 'worker', prompt: 'sleep:1500 answer:done', wait: true });
    const { task } = created;
    expect(task).toMatchObject({ status: 'working', statusMessage: 'turn 1 running', ttl: null, pollInterval: 2000 });
    const [session, turn] = (task.taskId as string).split(':');
    expect(turn).toBe('1');
    const first = JSON.parse(created._meta['io.modelcontextprotocol/model-immediate-response']);
    expect(first).toMatchObject({ session, status: 'running', turn: 1 });
    expect(await owner.client.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working' });

    // tasks/result waits for the end.
    const result = (await owner.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ session, profile: 'worker', status: 'exited', turn: 1, exitCode: 0, text: 'done', answer: 'done' });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    expect(result._meta).toEqual({ [RELATED_TASK]: { taskId: task.taskId } });
    const pushed = await waitFor(() => notices.find((n) => n.method === 'notifications/tasks/status'), { what: 'notifications/tasks/status', timeoutMs: 20_000 });
    expect(pushed.params).toMatchObject({ taskId: task.taskId, status: 'completed', statusMessage: 'turn 1 exited 0' });
    const done = await owner.client.experimental.tasks.getTask(task.taskId);
    expect(done).toMatchObject({ status: 'completed', statusMessage: 'turn 1 exited 0', createdAt: expect.any(String), lastUpdatedAt: expect.any(String) });

    // A later turn changes nothing of this task.
    await answer(owner.client, 'session_send', { session, prompt: 'answer:later', wait: true });
    expect(await owner.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toEqual(result);
    expect(await owner.client.experimental.tasks.getTask(task.taskId)).toEqual(done);
    expect((await owner.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual([task.taskId]);

    // The SDK's own streaming helper sees the same life: created, then the result.
    const kinds: string[] = [];
    let streamed: any;
    for await (const message of owner.client.experimental.tasks.callToolStream({ name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'answer:streamed' } })) {
      kinds.push(message.type);
      if (message.type === 'result') streamed = message.result.structuredContent;
    }
    expect(kinds[0]).toBe('taskCreated');
    expect(kinds.at(-1)).toBe('result');
    expect(streamed).toMatchObject({ status: 'exited', answer: 'streamed' });
  });

  it('names one turn: cancelling a send\'s task stops that turn only, never the session; a finished task is not cancelled', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    await owner.client.listTools();
    const { session } = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:one', wait: true });

    const held = (await startTask(owner.client, 'majordomus_session_send', { session, prompt: 'sleep:600000' })).task;
    expect(held).toMatchObject({ taskId: `${session}:2`, status: 'working' });
    const cancelled = await owner.client.experimental.tasks.cancelTask(held.taskId);
    expect(cancelled).toMatchObject({ taskId: held.taskId, status: 'cancelled', statusMessage: 'turn 2 killed' });
    expect(await status(owner.client, session)).toMatchObject({ status: 'killed', turns: [{ turn: 1, status: 'exited' }, { turn: 2, status: 'killed' }] });
    const afterCancel = (await owner.client.experimental.tasks.getTaskResult(held.taskId, CallToolResultSchema)) as CallToolResult;
    expect(afterCancel.structuredContent).toMatchObject({ turn: 2, delivery: 'resumed', text: 'error: the turn was killed' });

    const quick = (await startTask(owner.client, 'majordomus_session_send', { session, prompt: 'answer:three' })).task;
    expect(quick.taskId).toBe(`${session}:3`);
    await waitForTurnEnd(owner.client, session);
    await answer(owner.client, 'session_send', { session, prompt: 'sleep:600000' });
    const refused = await rpcError(() => owner.client.experimental.tasks.cancelTask(quick.taskId));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain(`Cannot cancel task ${quick.taskId}: it is already completed`);
    expect(await owner.client.experimental.tasks.getTask(quick.taskId)).toMatchObject({ status: 'completed' });
    // Turn 4 runs on, and the session was never reaped.
    expect(await status(owner.client, session)).toMatchObject({ status: 'running', turn: 4 });
    expect((await answer(owner.client, 'session_list')).sessions.map((s: { session: string }) => s.session)).toContain(session);
    await answer(owner.client, 'session_kill', { session });
  });

  it('runs run_task as a task whose result is the task\'s state at that turn', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    await owner.client.listTools();
    const { task } = await startTask(owner.client, 'run_task', { task: 'sleep:500 answer:patched it', profile: 'executor' });
    expect(task).toMatchObject({ status: 'working', taskId: expect.stringMatching(/:1$/) });
    const result = (await owner.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ task_id: task.taskId.split(':')[0], status: 'completed', result: 'patched it' });
    expect(await owner.client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed', statusMessage: 'turn 1 exited 0: task completed' });
  });

  it('works through a bridge and over /mcp, and keeps each session\'s tasks its own', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    const url = (await waitForLog(owner.stderr, SERVING_HTTP))[1] as string;
    const bridge = await scene.client(repo.root);
    await waitForLog(bridge.stderr, ATTACHED);
    await bridge.client.listTools();

    const bridged = (await startTask(bridge.client, 'majordomus_spawn', { profile: 'worker', prompt: 'sleep:500 answer:bridged' })).task;
    const bridgedResult = (await bridge.client.experimental.tasks.getTaskResult(bridged.taskId, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    expect(bridgedResult.structuredContent).toMatchObject({ status: 'exited', answer: 'bridged' });
    expect((await rpcError(() => owner.client.experimental.tasks.getTask(bridged.taskId))).code).toBe(-32602);

    const { session: http } = await openHttpSession(url, 'http-peer', leaseToken(repo.root));
    scene.defer(async () => {
      await http.close();
    });
    // openHttpSession agrees 2025-06-18: a session of its own on 2025-11-25.
    const init = await http.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'http-tasks', version: '1' } });
    expect(init.result.capabilities.tasks).toEqual(TASK_CAPABILITY);
    const created = await http.request('tools/call', { name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'sleep:500 answer:over http' }, task: {} });
    const taskId = created.result.task.taskId as string;
    expect((await http.request('tasks/get', { taskId })).result).toMatchObject({ taskId, status: expect.stringMatching(/^(working|completed)$/) });
    const result = await http.request('tasks/result', { taskId });
    expect(result.result).toMatchObject({ structuredContent: { status: 'exited', answer: 'over http' }, _meta: { [RELATED_TASK]: { taskId } } });
    expect((await http.request('tasks/list')).result.tasks).toEqual([expect.objectContaining({ taskId, status: 'completed' })]);
  });

  it('refuses what cannot run as a task', async () => {
    const repo = await scene.repo({ files });
    const owner = await scene.client(repo.root);
    await owner.client.listTools();
    const refused = await rpcError(() => startTask(owner.client, 'majordomus_spawn', { profile: 'nobody', prompt: 'hi' }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('profile "nobody" is not nominated');
    expect((await answer(owner.client, 'session_list')).sessions).toEqual([]);
    expect((await rpcError(() => startTask(owner.client, 'majordomus_session_list', {}))).code).toBe(-32601);
    expect((await rpcError(() => owner.client.experimental.tasks.getTask('3b9e7f5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b:1'))).code).toBe(-32602);

    const { task } = await startTask(owner.client, 'majordomus_spawn', { profile: 'worker', prompt: 'answer:soon reaped' });
    const [session] = (task.taskId as string).split(':');
    await waitForTurnEnd(owner.client, session as string);
    expect(await answer(owner.client, 'session_kill', { session })).toMatchObject({ action: 'reaped' });
    const gone = await rpcError(() => owner.client.experimental.tasks.getTask(task.taskId));
    expect(gone.code).toBe(-32602);
    expect(gone.message).toContain('is gone');
  });
});
