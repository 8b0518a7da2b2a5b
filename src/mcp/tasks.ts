/**
 * MCP tasks (protocol 2025-11-25, `tasks` capability) of one session. A `tools/call` carrying
 * `params.task` for a tool that may run as one is answered with `CreateTaskResult` as soon as its
 * work has started (the capability is told through `CallContext.onTask`, and ignores any wait);
 * `tasks/get`, `tasks/result` (blocks until the task ends, then answers exactly what the
 * synchronous call does, with `_meta` naming the task), `tasks/list` and `tasks/cancel` follow.
 *
 * What a task is — its id, its status, its result, how it is cancelled — the tool's companion
 * capabilities say (`TaskCompanions`); this module only keeps which tasks this session created
 * (a client sees its own, as the spec binds tasks to their requestor) and speaks the protocol.
 * Nothing is kept past the session: a task lives as long as the turn it names is in the table.
 */
import type { CallOutcome } from '../platform/call.js';
import { RPC, type JsonRpcNotification } from '../platform/jsonrpc.js';
import type { TaskCompanions } from '../registry/descriptor.js';
import type { McpBackend } from './backend.js';
import { ToolResult } from './frame.js';
import { isObject, requiredString, RequestError, type Params, type RequestScope } from './request.js';
import { callContextOf, offeredTool, refusalError, type ToolCaller, type ToolOffer } from './tools.js';

/** The protocol revision that brought tasks: a session on an older one is offered none. */
export const TASKS_PROTOCOL = '2025-11-25';
/** `_meta` key naming the task a message belongs to. */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** `_meta` key of what a host may hand its model while the task runs (the call's own first answer). */
export const IMMEDIATE_RESPONSE = 'io.modelcontextprotocol/model-immediate-response';
/** How often a client should poll a working task; one that takes `notifications/tasks/status` need not. */
export const POLL_INTERVAL_MS = 2_000;
/** `tasks/result` waits for the end in slices this long, each well within a call's own deadline. */
const RESULT_WAIT_SECONDS = 300;
const TASK_PAGE = 100;

/** Whether a negotiated protocol revision has tasks (revisions are dates, so they sort). */
export function hasTasks(protocolVersion: string | null): boolean {
  return protocolVersion !== null && protocolVersion >= TASKS_PROTOCOL;
}

/** A task as MCP spells it. */
export interface McpTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Retention is bounded by how many finished sessions are kept, not by a duration. */
  ttl: null;
  pollInterval: number;
}

interface OwnTask {
  taskId: string;
  /** The tool's capability (its companions are asked `tool: <this>`). */
  capabilityId: string;
  companions: TaskCompanions;
}

type TaskState = Omit<McpTask, 'ttl' | 'pollInterval'>;

const isTerminal = (status: McpTask['status']): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

function wire(state: TaskState): McpTask {
  return { ...state, ttl: null, pollInterval: POLL_INTERVAL_MS };
}

export class SessionTasks {
  readonly #backend: McpBackend;
  /** This session's tasks, by id, in the order they were created. */
  readonly #own = new Map<string, OwnTask>();

  constructor(backend: McpBackend) {
    this.#backend = backend;
  }

  /** A `tools/call` that asked for a task: runs the call until its work starts, answers `CreateTaskResult`. */
  async create(params: Params, scope: RequestScope, caller: ToolCaller, offer: ToolOffer): Promise<unknown> {
    const { name, capabilityId } = offeredTool(this.#backend, params, offer);
    const companions = this.#backend.tools.tasks?.get(name);
    // MCP: a task-augmented call of a tool whose taskSupport is forbidden is -32601.
    if (companions === undefined) throw new RequestError(RPC.methodNotFound, `Tool ${name} does not run as a task (its execution.taskSupport is forbidden); call it without params.task`);
    let taskId: string | undefined;
    const call = callContextOf(scope, caller);
    call.onTask = (id) => (taskId = id);
    const outcome = await this.#backend.invoke(capabilityId, params.arguments === undefined ? {} : params.arguments, caller.peerId, call);
    // A call refused before its work started created no task: there is nothing to poll.
    if (!outcome.ok) throw refusalError(name, outcome);
    if (taskId === undefined) throw new RequestError(RPC.internalError, `Internal error: ${name} answered without starting a task`);
    const own: OwnTask = { taskId, capabilityId, companions };
    this.#own.set(taskId, own);
    const { task } = await this.#state(own, caller, {});
    return { task: wire(task), _meta: { [IMMEDIATE_RESPONSE]: outcome.json } };
  }

  /** `tasks/get`. */
  async get(params: Params, caller: ToolCaller): Promise<unknown> {
    const { task } = await this.#state(this.#named(params, 'tasks/get'), caller, {});
    return wire(task);
  }

  /** `tasks/result`: waits for the task to end, then answers what the synchronous call answers. */
  async result(params: Params, scope: RequestScope, caller: ToolCaller): Promise<unknown> {
    const own = this.#named(params, 'tasks/result');
    for (;;) {
      const { task, result } = await this.#state(own, caller, { result: true, wait_seconds: RESULT_WAIT_SECONDS }, scope.signal);
      if (scope.signal.aborted) return undefined; // cancelled: the session answers nothing
      if (isTerminal(task.status)) return new ToolResult(JSON.stringify(result ?? null), { [RELATED_TASK]: { taskId: own.taskId } });
    }
  }

  /** `tasks/list`: this session's tasks, oldest first, in pages with an opaque cursor. */
  async list(params: Params, caller: ToolCaller): Promise<unknown> {
    const owned = [...this.#own.values()];
    let offset = 0;
    if (params.cursor !== undefined) {
      offset = typeof params.cursor === 'string' ? Number.parseInt(Buffer.from(params.cursor, 'base64url').toString(), 10) : Number.NaN;
      if (!Number.isInteger(offset) || offset < 0 || offset > owned.length) throw new RequestError(RPC.invalidParams, 'Invalid params: unknown cursor');
    }
    const page = owned.slice(offset, offset + TASK_PAGE);
    const states = await Promise.all(page.map((own) => this.#state(own, caller, {}).then(({ task }) => wire(task), () => null)));
    const next = offset + TASK_PAGE;
    const tasks = states.filter((task): task is McpTask => task !== null);
    return next < owned.length ? { tasks, nextCursor: Buffer.from(String(next)).toString('base64url') } : { tasks };
  }

  /** `tasks/cancel`: stops the task's work; a task that has ended is refused (-32602), and left as it is. */
  async cancel(params: Params, caller: ToolCaller): Promise<unknown> {
    const own = this.#named(params, 'tasks/cancel');
    const answer = await this.#ask(own, own.companions.cancel, { task: own.taskId, tool: own.capabilityId }, caller);
    const { task, stopped } = answer as { task: TaskState; stopped: boolean };
    if (!stopped) throw new RequestError(RPC.invalidParams, `Cannot cancel task ${own.taskId}: it is already ${task.status} (${task.statusMessage ?? ''})`);
    return wire(task);
  }

  /** Work of these tasks ended: the client hears `notifications/tasks/status` for each of its own. */
  ended(taskIds: readonly string[], caller: ToolCaller, send: (frame: JsonRpcNotification) => void): void {
    for (const taskId of taskIds) {
      const own = this.#own.get(taskId);
      if (own === undefined) continue;
      void this.#state(own, caller, {}).then(
        ({ task }) => send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...wire(task) } }),
        () => undefined, // gone meanwhile: a tasks/get says so
      );
    }
  }

  #named(params: Params, method: string): OwnTask {
    const taskId = requiredString(params, 'taskId', method);
    const own = this.#own.get(taskId);
    if (own === undefined) throw new RequestError(RPC.invalidParams, `Failed to retrieve task: no task ${taskId} (tasks/list names this session's tasks)`);
    return own;
  }

  async #state(own: OwnTask, caller: ToolCaller, extra: Record<string, unknown>, signal?: AbortSignal): Promise<{ task: TaskState; result?: unknown }> {
    const answer = await this.#ask(own, own.companions.state, { task: own.taskId, tool: own.capabilityId, ...extra }, caller, signal);
    return answer as { task: TaskState; result?: unknown };
  }

  /** Asks a companion capability; a task that no longer exists (its session was reaped) is forgotten. */
  async #ask(own: OwnTask, capabilityId: string, input: Record<string, unknown>, caller: ToolCaller, signal?: AbortSignal): Promise<unknown> {
    const outcome: CallOutcome = await this.#backend.invoke(capabilityId, input, caller.peerId, signal === undefined ? {} : { signal });
    if (outcome.ok) return JSON.parse(outcome.json) as unknown;
    if (outcome.code === 'not_found') {
      this.#own.delete(own.taskId);
      throw new RequestError(RPC.invalidParams, `Failed to retrieve task: ${own.taskId} is gone (${outcome.message})`);
    }
    throw new RequestError(outcome.code === 'internal' || outcome.code === 'busy' ? RPC.internalError : RPC.invalidParams, `${outcome.code}: ${outcome.message}`);
  }
}

/** Whether a `tools/call`'s params ask for a task (`params.task`, an object). */
export function asksForTask(params: Params): boolean {
  return isObject(params.task);
}
