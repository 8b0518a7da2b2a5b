/**
 * One MCP session, independent of its transport. The stdio loop and the HTTP `/mcp` endpoint both
 * hand it parsed JSON-RPC messages and write back what it answers, so a client gets the same bytes
 * over either.
 *
 * This file is the session's dispatch and lifecycle: JSON-RPC in and out, `initialize`, `ping`,
 * cancellation, `close()`. Its jobs are each in a module of their own: the tools (src/mcp/tools.ts),
 * the resources and subscriptions (src/mcp/resources.ts), MCP tasks (src/mcp/tasks.ts), the
 * notifications tied to no request (src/mcp/notifications.ts), the requests under way
 * (src/mcp/in-flight.ts), the server's log lines and the client's level for them
 * (src/mcp/logging.ts).
 *
 * At `initialize` the session decides what it offers: tasks when the protocol agreed has them
 * (2025-11-25), and no delegating tool to a client at the delegation limit (its depth, from
 * `MAJORDOMUS_SPAWN_DEPTH` or its bridge's header, at the policy's `max_depth`).
 *
 * Requests run concurrently. A tool call is tracked by its id while it runs: a
 * `notifications/cancelled` naming it (or `close()`) aborts its signal, and a cancelled request is
 * not answered (MCP: the receiver should not respond). A tool call whose `_meta.progressToken` the
 * client set, handled with a notification sink, reports its progress as `notifications/progress`
 * on that sink. Notifications tied to no request go to the session's stream, when a transport has
 * attached one (stdout on stdio, the `GET /mcp` stream over HTTP).
 */
import { errorMessage } from '../platform/errors.js';
import { JsonInputError, parseJsonInput } from '../platform/json-input.js';
import { errorResponse, isJsonRpcId, RPC, type JsonRpcId, type JsonRpcResponse } from '../platform/jsonrpc.js';
import type { McpBackend } from './backend.js';
import { frameText } from './frame.js';
import { InFlight, untilAborted } from './in-flight.js';
import { initializeResult, readInitialize } from './initialize.js';
import { SessionLogging, type LogSource } from './logging.js';
import { SessionStream } from './notifications.js';
import { isObject, RequestError, type NotificationSink, type Params, type RequestScope } from './request.js';
import { SessionResources } from './resources.js';
import { asksForTask, hasTasks, SessionTasks } from './tasks.js';
import { callTool, listTools, type ToolCaller, type ToolOffer } from './tools.js';

export type { McpBackend } from './backend.js';
export { progressTokenOf, type NotificationSink } from './request.js';

/** The signal of a request that cannot be cancelled. */
const NEVER_ABORTED = new AbortController().signal;

/** The answer to a frame whose JSON could not be read (bad syntax, or nested too deep). */
export function unreadableFrameResponse(error: JsonInputError): JsonRpcResponse {
  if (error.problem === 'depth') {
    const id = (error.value as { id?: unknown } | null)?.id;
    return errorResponse(isJsonRpcId(id) ? id : null, isJsonRpcId(id) ? RPC.invalidParams : RPC.invalidRequest, `Invalid params: ${error.message}`);
  }
  return errorResponse(null, RPC.parseError, `Parse error: ${error.message}`);
}

export class McpSession {
  readonly #backend: McpBackend;
  #peerId: string | null = null;
  #protocolVersion: string | null = null;
  #closed = false;
  readonly #preferredPeerId: string | undefined;
  /** The client's depth: as it said (its environment, its bridge's header), or the harness's for an agent it spawned. */
  #spawnDepth: number | undefined;
  readonly #clientPids: readonly number[];
  readonly #inFlight = new InFlight();
  readonly #stream = new SessionStream();
  readonly #resources: SessionResources;
  readonly #logging = new SessionLogging((params) => this.notify('notifications/message', params));
  readonly #stopLogs: () => void;
  readonly #tasks: SessionTasks;
  /** What the session offers, decided at initialize (before it: what the backend says now). */
  #offer: ToolOffer | null = null;

  /**
   * `preferredPeerId`: the identity this client had on a server that is gone (see PeerBoard.join).
   * `spawnDepth`: the client's delegation depth as its bridge reported it (absent: the server's).
   * `clientPids`: the process chain of the agent behind the client, nearest first (the git guard
   * tells peers apart by it). `logs`: the server's log lines, which the client hears at or above
   * the level it set (none without it).
   */
  constructor(backend: McpBackend, options: { preferredPeerId?: string; spawnDepth?: number; clientPids?: readonly number[]; logs?: LogSource } = {}) {
    this.#spawnDepth = options.spawnDepth;
    this.#clientPids = options.clientPids ?? [];
    this.#backend = backend;
    this.#preferredPeerId = options.preferredPeerId;
    this.#resources = new SessionResources(backend);
    this.#stopLogs = options.logs?.((record) => this.#logging.deliver(record)) ?? (() => undefined);
    this.#tasks = new SessionTasks(backend);
  }

  get peerId(): string | null {
    return this.#peerId;
  }

  get protocolVersion(): string | null {
    return this.#protocolVersion;
  }

  /**
   * One frame in, the answering frame out (a stdio `FrameHandler`); the same bytes on every
   * transport. `notify` writes the request's notifications (its progress) before the answer.
   */
  async handleLine(line: string, notify?: (frame: string) => void): Promise<string | undefined> {
    const answer = await this.handleText(line, notify && ((frame) => notify(JSON.stringify(frame))));
    return answer === undefined ? undefined : frameText(answer);
  }

  /** The stdio form of `attachStream`: the session's own notifications written as frames. */
  streamTo(write: (frame: string) => void): void {
    this.attachStream((frame) => write(JSON.stringify(frame)));
  }

  /**
   * Attaches the session's server-to-client stream (replacing any other); answers a detach that
   * only detaches this sink.
   */
  attachStream(sink: NotificationSink): () => void {
    return this.#stream.attach(sink);
  }

  /**
   * Sends a notification tied to no request on the session's stream; false when none is attached,
   * or when it `requires` an experimental capability the client did not declare.
   */
  notify(method: string, params?: Record<string, unknown>, requires: string | null = null): boolean {
    return this.#stream.send(method, params, requires);
  }

  /** A new generation of the layer serves; see `SessionResources.layerChanged`. */
  layerChanged(changed: readonly string[]): void {
    this.#resources.layerChanged(changed, (method, params) => this.notify(method, params));
  }

  /** Resources read through capabilities changed (a turn started or ended): subscribers hear each. */
  resourcesChanged(uris: readonly string[]): void {
    this.#resources.updated(uris, (method, params) => this.notify(method, params));
  }

  /** These tasks' work ended: the client hears the status of each of its own. */
  tasksEnded(taskIds: readonly string[]): void {
    if (!this.#offered().tasks) return;
    this.#tasks.ended(taskIds, this.#caller(), (frame) => this.notify(frame.method, frame.params));
  }

  /** Cancels a tool call under way (its signal aborts, it gets no answer); false when none has that id. */
  cancel(requestId: JsonRpcId, reason = 'the client cancelled the request'): boolean {
    return this.#inFlight.cancel(requestId, reason);
  }

  /** Parses one frame's text and answers it; malformed or too deep JSON is answered and the session goes on. */
  async handleText(text: string, notify?: NotificationSink): Promise<JsonRpcResponse | undefined> {
    let message: unknown;
    try {
      message = parseJsonInput(text);
    } catch (error) {
      if (error instanceof JsonInputError) return unreadableFrameResponse(error);
      throw error;
    }
    return this.handle(message, notify);
  }

  /**
   * Answers one JSON-RPC message; notifications, responses and cancelled requests get no answer.
   * `notify` receives the request's own notifications (progress) while it runs.
   */
  async handle(message: unknown, notify?: NotificationSink): Promise<JsonRpcResponse | undefined> {
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      const id = isObject(message) && isJsonRpcId(message.id) ? message.id : null;
      return errorResponse(id, RPC.invalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 object');
    }
    const { id, method } = message;
    if (typeof method !== 'string') {
      // A response to a request we never send, or junk: answer only what carries an id.
      if ('result' in message || 'error' in message) return undefined;
      return errorResponse(isJsonRpcId(id) ? id : null, RPC.invalidRequest, 'Invalid Request: method must be a string');
    }
    if (id === undefined) {
      // Of the notifications (initialized, cancelled, roots/list_changed…) only a cancellation acts.
      if (method === 'notifications/cancelled' && isObject(message.params) && isJsonRpcId(message.params.requestId)) {
        const { reason } = message.params;
        this.cancel(message.params.requestId, typeof reason === 'string' && reason !== '' ? reason : undefined);
      }
      return undefined;
    }
    if (!isJsonRpcId(id)) return errorResponse(null, RPC.invalidRequest, 'Invalid Request: id must be a string or number');
    const params = message.params === undefined ? {} : message.params;
    if (!isObject(params)) return errorResponse(id, RPC.invalidParams, 'Invalid params: params must be an object');
    // Only a tool call and a task's result run long enough to be worth cancelling; the rest answer at once.
    const controller = method === 'tools/call' || method === 'tasks/result' ? this.#inFlight.start(id) : null;
    try {
      const work = this.#request(method, params, { signal: controller?.signal ?? NEVER_ABORTED, notify });
      const result = controller ? await untilAborted(work, controller.signal) : await work;
      if (controller?.signal.aborted) return undefined;
      return { jsonrpc: '2.0', id, result };
    } catch (error) {
      if (controller?.signal.aborted) return undefined;
      if (error instanceof RequestError) return errorResponse(id, error.code, error.message);
      return errorResponse(id, RPC.internalError, `Internal error: ${errorMessage(error)}`);
    } finally {
      if (controller) this.#inFlight.end(id, controller);
    }
  }

  /** Ends the session: calls under way are cancelled, the stream detached, the peer leaves the board. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopLogs();
    this.#logging.close();
    this.#stream.close();
    this.#inFlight.cancelAll('the session ended');
    if (this.#peerId !== null) this.#backend.leave(this.#peerId);
  }

  async #request(method: string, params: Params, scope: RequestScope): Promise<unknown> {
    switch (method) {
      case 'initialize':
        return this.#initialize(params);
      case 'ping':
        return {};
      case 'tools/list':
        return listTools(this.#backend, this.#offered());
      case 'tools/call':
        // A client whose protocol has no tasks gets the call it always got, task or not.
        if (this.#offered().tasks && asksForTask(params)) return this.#tasks.create(params, scope, this.#caller(), this.#offered());
        return callTool(this.#backend, params, scope, this.#caller(), this.#offered());
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/list':
      case 'tasks/cancel':
        return this.#task(method, params, scope);
      case 'resources/list':
        return this.#resources.list(params);
      case 'resources/templates/list':
        return this.#resources.templates();
      case 'resources/read':
        return this.#resources.read(params, this.#peerId);
      case 'resources/subscribe':
        return this.#resources.subscribe(params, this.#peerId);
      case 'resources/unsubscribe':
        return this.#resources.unsubscribe(params);
      case 'logging/setLevel':
        return this.#logging.setLevel(params);
      default:
        throw new RequestError(RPC.methodNotFound, `Method not found: ${method}`);
    }
  }

  /** Joins the board once; a second `initialize` (a replay after a takeover) only reads the instructions again. */
  async #initialize(params: Params): Promise<unknown> {
    const request = readInitialize(params);
    this.#stream.declare(request.experimental);
    this.#protocolVersion = request.protocolVersion;
    // An agent this server spawned is at the depth the harness gave it, whatever its client
    // passed on to majordomus (Codex starts MCP servers with a fixed set of variables).
    const stamped = await this.#backend.agentDepth?.(this.#clientPids);
    if (stamped !== undefined && stamped !== null) this.#spawnDepth = Math.max(this.#spawnDepth ?? 0, stamped);
    this.#offer = this.#decideOffer();
    let instructions: string;
    if (this.#peerId === null) {
      const joined = await this.#backend.join(request.client, this.#preferredPeerId ?? null, this.#clientPids);
      this.#peerId = joined.peerId;
      instructions = joined.instructions;
    } else {
      instructions = await this.#backend.instructions(this.#peerId);
    }
    return initializeResult(this.#protocolVersion, this.#withoutWithheldGuidance(instructions), { tasks: this.#offer.tasks });
  }

  /** What this session offers: its depth against the delegation limit, its protocol against tasks. */
  #decideOffer(): ToolOffer {
    const depth = this.#spawnDepth ?? 0;
    const limit = this.#backend.delegationLimit?.();
    const tasks = hasTasks(this.#protocolVersion);
    if (limit === undefined || depth < limit) return { delegates: true, tasks };
    return { delegates: false, tasks, withheld: `delegation limit (depth ${depth}, max ${limit})` };
  }

  #offered(): ToolOffer {
    this.#offer ??= this.#decideOffer();
    return this.#offer;
  }

  #caller(): ToolCaller {
    return { peerId: this.#peerId, spawnDepth: this.#spawnDepth };
  }

  /** The instructions without the lines that would point a client at a tool it is not offered. */
  #withoutWithheldGuidance(instructions: string): string {
    if (this.#offered().delegates) return instructions;
    const withheld = new Set([...(this.#backend.tools.delegating?.values() ?? [])].filter((line): line is string => line !== null));
    return instructions
      .split('\n')
      .filter((line) => !withheld.has(line))
      .join('\n');
  }

  /** The `tasks/*` methods: only for a session whose protocol has tasks (else there is no such method). */
  async #task(method: string, params: Params, scope: RequestScope): Promise<unknown> {
    if (!this.#offered().tasks) throw new RequestError(RPC.methodNotFound, `Method not found: ${method} (tasks need protocol 2025-11-25; this session agreed ${this.#protocolVersion ?? 'none yet'})`);
    const caller = this.#caller();
    switch (method) {
      case 'tasks/get':
        return this.#tasks.get(params, caller);
      case 'tasks/result':
        return this.#tasks.result(params, scope, caller);
      case 'tasks/list':
        return this.#tasks.list(params, caller);
      default:
        return this.#tasks.cancel(params, caller);
    }
  }
}
