/**
 * What an McpSession offers, decided at initialize, and its MCP tasks — over a fake backend whose
 * `start` tool starts a task and whose companions answer it. Covers:
 * - protocol 2025-11-25: `tasks` declared and `execution.taskSupport` on the tools that may run
 *   as one; an older protocol: neither, `params.task` ignored, `tasks/*` -32601;
 * - the delegation limit: at it (its own depth, or the depth the backend knows its agent by) the
 *   delegating tools are neither listed nor callable (-32602) nor in the instructions;
 * - a task: created from the call's `onTask`, read through its companion, its result the call's
 *   answer with `_meta` naming it, cancel refused (-32602) for a finished one, unknown or gone
 *   tasks -32602, `notifications/tasks/status` for the session's own tasks only;
 * - subscriptions to what a capability reads: allowed when it reads now, told on resourcesChanged.
 */
import { describe, expect, it } from 'vitest';
import type { McpTool } from '../../../src/mcp/projection.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';
import { resourceRoute } from '../../../src/mcp/projection.js';
import type { CallContext, CallOutcome } from '../../../src/platform/call.js';
import { RPC } from '../../../src/platform/jsonrpc.js';

function tool(name: string): McpTool {
  return { name, title: name, description: name, inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, annotations: { title: name, readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false } };
}

const COMPANIONS = { state: 'test.task_state', cancel: 'test.task_cancel' };

interface FakeTask {
  status: 'working' | 'completed' | 'cancelled';
}

function backend(options: { limit?: number; agentDepth?: number | null } = {}): McpBackend & { tasks: Map<string, FakeTask>; calls: Array<{ id: string; input: any; call?: CallContext }> } {
  const tasks = new Map<string, FakeTask>();
  const calls: Array<{ id: string; input: any; call?: CallContext }> = [];
  const ids: Record<string, string> = { start: 'test.start', look: 'test.look', spawn: 'test.spawn' };
  const state = (taskId: string): CallOutcome => {
    const task = tasks.get(taskId);
    if (task === undefined) return { ok: false, code: 'not_found', message: `no task ${taskId}` };
    return { ok: true, json: JSON.stringify({ task: { taskId, status: task.status, statusMessage: `it is ${task.status}`, createdAt: 't0', lastUpdatedAt: 't1' }, ...(task.status === 'working' ? {} : { result: { answer: 42 } }) }) };
  };
  return {
    tasks,
    calls,
    tools: {
      tools: Object.keys(ids).map(tool),
      capabilityOf: (name) => ids[name],
      resources: [resourceRoute('majordomus://things/{thing}', { id: 'test.thing', title: 'thing', description: 'a thing' })],
      delegating: new Map([['spawn', 'Spawn agents with spawn.']]),
      tasks: new Map([['start', COMPANIONS]]),
    },
    async invoke(capabilityId, input: any, _caller, call) {
      calls.push({ id: capabilityId, input, ...(call ? { call } : {}) });
      if (capabilityId === 'test.start') {
        const taskId = `task-${tasks.size + 1}`;
        tasks.set(taskId, { status: 'working' });
        call?.onTask?.(taskId);
        return { ok: true, json: '{"started":true}' };
      }
      if (capabilityId === 'test.task_state') return state(input.task);
      if (capabilityId === 'test.task_cancel') {
        const task = tasks.get(input.task);
        if (task === undefined) return { ok: false, code: 'not_found', message: 'gone' };
        const stopped = task.status === 'working';
        if (stopped) task.status = 'cancelled';
        return { ok: true, json: JSON.stringify({ task: { taskId: input.task, status: task.status, statusMessage: 'x', createdAt: 't0', lastUpdatedAt: 't1' }, stopped }) };
      }
      if (capabilityId === 'test.thing') return input.thing === 'there' ? { ok: true, json: '{"text":"hi","mimeType":"text/plain"}' } : { ok: false, code: 'refused', message: 'no such thing' };
      return { ok: true, json: '{"looked":true}' };
    },
    objects: () => [],
    object: () => undefined,
    join: async () => ({ peerId: 'p1', instructions: 'Hello.\nSpawn agents with spawn.\nLook with look.' }),
    leave: () => undefined,
    instructions: async () => '',
    ...(options.limit === undefined ? {} : { delegationLimit: () => options.limit as number }),
    ...(options.agentDepth === undefined ? {} : { agentDepth: async () => options.agentDepth as number | null }),
  };
}

async function open(fake: McpBackend, protocolVersion = '2025-11-25', spawnDepth = 0): Promise<{ session: McpSession; frames: any[]; init: any }> {
  const session = new McpSession(fake, { spawnDepth });
  const frames: any[] = [];
  session.attachStream((frame) => frames.push(frame));
  const init = await session.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {} } });
  return { session, frames, init: init?.result };
}

const request = (method: string, params: Record<string, unknown> = {}, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });
const json = (value: unknown): any => JSON.parse(JSON.stringify(value));

describe('what a session offers', () => {
  it('declares tasks and marks the task tools on 2025-11-25, and neither on an older protocol', async () => {
    const { session, init } = await open(backend());
    expect(init.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = json(await session.handle(request('tools/list'))).result.tools;
    expect(tools.filter((t: any) => t.execution).map((t: any) => [t.name, t.execution])).toEqual([['start', { taskSupport: 'optional' }]]);

    const older = await open(backend(), '2025-06-18');
    expect(older.init.capabilities.tasks).toBeUndefined();
    expect(json(await older.session.handle(request('tools/list'))).result.tools.some((t: any) => t.execution)).toBe(false);
    expect((await older.session.handle(request('tasks/list')))?.error?.code).toBe(RPC.methodNotFound);
    const plain = json(await older.session.handle(request('tools/call', { name: 'start', arguments: {}, task: {} })));
    expect(plain.result.structuredContent).toEqual({ started: true });
  });

  it('withholds the delegating tools at the limit — by its own depth or the depth its backend knows it by', async () => {
    for (const [fake, depth] of [[backend({ limit: 1 }), 1], [backend({ limit: 1, agentDepth: 1 }), 0]] as const) {
      const { session, init } = await open(fake, '2025-11-25', depth);
      expect(json(await session.handle(request('tools/list'))).result.tools.map((t: any) => t.name)).toEqual(['start', 'look']);
      const refused = await session.handle(request('tools/call', { name: 'spawn', arguments: {} }));
      expect(refused?.error).toEqual({ code: RPC.invalidParams, message: 'Unknown tool: spawn (this session is at the delegation limit (depth 1, max 1): it is offered no tool that starts or drives agents)' });
      expect(init.instructions).toBe('Hello.\nLook with look.');
    }
    const below = await open(backend({ limit: 2, agentDepth: 1 }));
    expect(json(await below.session.handle(request('tools/list'))).result.tools.map((t: any) => t.name)).toContain('spawn');
  });
});

describe('a session\'s tasks', () => {
  it('creates a task from the call, reads it through its companion, answers its result with _meta, and tells its end', async () => {
    const fake = backend();
    const { session, frames } = await open(fake);
    const created = json(await session.handle(request('tools/call', { name: 'start', arguments: { wait: true }, task: {} })));
    expect(created.result).toEqual({
      task: { taskId: 'task-1', status: 'working', statusMessage: 'it is working', createdAt: 't0', lastUpdatedAt: 't1', ttl: null, pollInterval: 2000 },
      _meta: { 'io.modelcontextprotocol/model-immediate-response': '{"started":true}' },
    });
    expect(fake.calls.find((c) => c.id === 'test.start')?.call?.onTask).toBeTypeOf('function');
    expect(json(await session.handle(request('tasks/get', { taskId: 'task-1' }))).result).toMatchObject({ taskId: 'task-1', status: 'working' });

    (fake.tasks.get('task-1') as FakeTask).status = 'completed';
    session.tasksEnded(['task-1', 'someone-elses']);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(frames).toEqual([{ jsonrpc: '2.0', method: 'notifications/tasks/status', params: expect.objectContaining({ taskId: 'task-1', status: 'completed' }) }]);
    const result = await session.handleLine(JSON.stringify(request('tasks/result', { taskId: 'task-1' })));
    expect(JSON.parse(result as string).result).toEqual({ content: [{ type: 'text', text: '{"answer":42}' }], structuredContent: { answer: 42 }, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'task-1' } } });
    expect(json(await session.handle(request('tasks/list'))).result.tasks.map((t: any) => t.taskId)).toEqual(['task-1']);
    expect((await session.handle(request('tasks/cancel', { taskId: 'task-1' })))?.error).toMatchObject({ code: RPC.invalidParams, message: expect.stringContaining('Cannot cancel task task-1: it is already completed') });
  });

  it('cancels a working task, refuses tools without task support (-32601), and forgets unknown and gone tasks (-32602)', async () => {
    const fake = backend();
    const { session } = await open(fake);
    await session.handle(request('tools/call', { name: 'start', arguments: {}, task: {} }));
    expect(json(await session.handle(request('tasks/cancel', { taskId: 'task-1' }))).result).toMatchObject({ taskId: 'task-1', status: 'cancelled' });
    expect((await session.handle(request('tools/call', { name: 'look', arguments: {}, task: {} })))?.error?.code).toBe(RPC.methodNotFound);
    expect((await session.handle(request('tasks/get', { taskId: 'never' })))?.error?.code).toBe(RPC.invalidParams);
    fake.tasks.delete('task-1');
    expect((await session.handle(request('tasks/get', { taskId: 'task-1' })))?.error).toMatchObject({ code: RPC.invalidParams, message: expect.stringContaining('is gone') });
    expect(json(await session.handle(request('tasks/list'))).result.tasks).toEqual([]);
  });
});

describe('subscriptions to what a capability reads', () => {
  it('subscribes to a URI that reads now, refuses one that does not (-32002), and tells only the subscribed ones', async () => {
    const { session, frames } = await open(backend());
    expect((await session.handle(request('resources/subscribe', { uri: 'majordomus://things/there' })))?.result).toEqual({});
    expect((await session.handle(request('resources/subscribe', { uri: 'majordomus://things/missing' })))?.error?.code).toBe(RPC.resourceNotFound);
    expect((await session.handle(request('resources/subscribe', { uri: 'majordomus://nothing/here' })))?.error?.code).toBe(RPC.resourceNotFound);
    session.resourcesChanged(['majordomus://things/there', 'majordomus://things/else']);
    expect(frames).toEqual([{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'majordomus://things/there' } }]);
  });
});
