/**
 * One MCP session, independent of its transport. The stdio loop and the HTTP `/mcp` endpoint both
 * hand it parsed JSON-RPC messages and write back what it answers, so a client gets the same bytes
 * over either.
 *
 * Requests run concurrently. A tool call is tracked by its id while it runs: a
 * `notifications/cancelled` naming it (or `close()`) aborts its signal, and a cancelled request is
 * not answered (MCP: the receiver should not respond). A tool call whose `_meta.progressToken` the
 * client set, handled with a notification sink, reports its progress as `notifications/progress`
 * on that sink. Notifications tied to no request go to the session's stream, when a transport has
 * attached one (stdout on stdio, the `GET /mcp` stream over HTTP).
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../platform/errors.js';
import { JsonInputError, parseJsonInput } from '../platform/json-input.js';
import type { LayerObject } from '../layer/types.js';
import type { PeerClient } from '../peers/board.js';
import { cleanClient } from '../peers/schema.js';
import type { CallContext, CallOutcome } from '../platform/call.js';
import { VERSION } from '../platform/version.js';
import { frameText, ToolResult } from './frame.js';
import { errorResponse, isJsonRpcId, RPC, type JsonRpcId, type JsonRpcNotification, type JsonRpcResponse } from '../platform/jsonrpc.js';
import { resourceOf, type McpResource, type ToolTable } from './projection.js';

const RESOURCE_PAGE = 500;
/** The signal of a request that cannot be cancelled. */
const NEVER_ABORTED = new AbortController().signal;

/** What a session needs from the process that hosts it. */
export interface McpBackend {
  readonly tools: ToolTable;
  /**
   * Validates and runs a capability; a refusal is an outcome, never a throw. `call` carries the
   * caller's progress sink and cancellation to wherever the handler runs.
   */
  invoke(capabilityId: string, args: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome>;
  objects(): readonly LayerObject[];
  object(uri: string): LayerObject | undefined;
  /** Adds the peer; answers its id and its `initialize` instructions (one trip where that costs one). */
  join(client: PeerClient, preferredPeerId: string | null, clientPids: readonly number[]): Promise<{ peerId: string; instructions: string }>;
  leave(peerId: string): void;
  instructions(peerId: string): Promise<string>;
}

/** The answer to a frame whose JSON could not be read (bad syntax, or nested too deep). */
export function unreadableFrameResponse(error: JsonInputError): JsonRpcResponse {
  if (error.problem === 'depth') {
    const id = (error.value as { id?: unknown } | null)?.id;
    return errorResponse(isJsonRpcId(id) ? id : null, isJsonRpcId(id) ? RPC.invalidParams : RPC.invalidRequest, `Invalid params: ${error.message}`);
  }
  return errorResponse(null, RPC.parseError, `Parse error: ${error.message}`);
}

/** Where a session writes a notification: one request's stream, or the session's own. */
export type NotificationSink = (frame: JsonRpcNotification) => void;

/** What a request is handled with besides its params. */
interface RequestScope {
  signal: AbortSignal;
  notify: NotificationSink | undefined;
}

/** `_meta.progressToken` of a request's params, when the client asked for progress. */
export function progressTokenOf(params: unknown): JsonRpcId | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  const token = params._meta.progressToken;
  return isJsonRpcId(token) ? token : undefined;
}

/** Settles with `work`, or with `undefined` as soon as `signal` aborts (the work goes on unheard). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A capability read as a resource answers `{text, mimeType}` (its content as it is) or any other
 * JSON (served as application/json).
 */
function resourceContent(uri: string, value: unknown, json: string): { uri: string; mimeType: string; text: string } {
  if (isObject(value) && typeof value.text === 'string' && typeof value.mimeType === 'string' && Object.keys(value).length === 2) {
    return { uri, mimeType: value.mimeType, text: value.text };
  }
  return { uri, mimeType: 'application/json', text: json };
}

export class McpSession {
  readonly #backend: McpBackend;
  #peerId: string | null = null;
  #protocolVersion: string | null = null;
  #closed = false;
  readonly #preferredPeerId: string | undefined;
  readonly #spawnDepth: number | undefined;
  readonly #clientPids: readonly number[];
  /** Tool calls under way, by request id: what cancels each. */
  readonly #inFlight = new Map<JsonRpcId, AbortController>();
  #stream: NotificationSink | null = null;
  /** The experimental capabilities the client declared at initialize (`claude/channel`…). */
  #experimental: ReadonlySet<string> = new Set();
  /** URIs of layer objects the client subscribed to (`resources/subscribe`). */
  readonly #subscriptions = new Set<string>();

  /**
   * `preferredPeerId`: the identity this client had on a server that is gone (see PeerBoard.join).
   * `spawnDepth`: the client's delegation depth as its bridge reported it (absent: the server's).
   * `clientPids`: the process chain of the agent behind the client, nearest first (the git guard
   * tells peers apart by it).
   */
  constructor(backend: McpBackend, options: { preferredPeerId?: string; spawnDepth?: number; clientPids?: readonly number[] } = {}) {
    this.#spawnDepth = options.spawnDepth;
    this.#clientPids = options.clientPids ?? [];
    this.#backend = backend;
    this.#preferredPeerId = options.preferredPeerId;
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
    this.#stream = sink;
    return () => {
      if (this.#stream === sink) this.#stream = null;
    };
  }

  /**
   * Sends a notification tied to no request on the session's stream; false when none is attached,
   * or when it `requires` an experimental capability the client did not declare.
   */
  notify(method: string, params?: Record<string, unknown>, requires: string | null = null): boolean {
    const sink = this.#stream;
    if (sink === null || this.#closed) return false;
    if (requires !== null && !this.#experimental.has(requires)) return false;
    sink(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
    return true;
  }

  /**
   * A new generation of the layer serves, `changed` naming the objects that appeared, vanished or
   * changed: the client hears `notifications/resources/list_changed` when any did, and
   * `notifications/resources/updated` for each of them it subscribed to.
   */
  layerChanged(changed: readonly string[]): void {
    if (changed.length === 0) return;
    this.notify('notifications/resources/list_changed');
    if (this.#subscriptions.size === 0) return;
    for (const uri of changed) if (this.#subscriptions.has(uri)) this.notify('notifications/resources/updated', { uri });
  }

  /** Cancels a tool call under way (its signal aborts, it gets no answer); false when none has that id. */
  cancel(requestId: JsonRpcId, reason = 'the client cancelled the request'): boolean {
    const controller = this.#inFlight.get(requestId);
    if (!controller) return false;
    this.#inFlight.delete(requestId);
    controller.abort(new Error(reason));
    return true;
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
    // Only a tool call runs long enough to be worth cancelling; the rest answer at once.
    const controller = method === 'tools/call' ? new AbortController() : null;
    if (controller) this.#inFlight.set(id, controller);
    try {
      const work = this.#request(method, params, { signal: controller?.signal ?? NEVER_ABORTED, notify });
      const result = controller ? await untilAborted(work, controller.signal) : await work;
      if (controller?.signal.aborted) return undefined;
      return { jsonrpc: '2.0', id, result };
    } catch (error) {
      if (controller?.signal.aborted) return undefined;
      if (error instanceof RpcError) return errorResponse(id, error.code, error.message);
      return errorResponse(id, RPC.internalError, `Internal error: ${errorMessage(error)}`);
    } finally {
      if (controller && this.#inFlight.get(id) === controller) this.#inFlight.delete(id);
    }
  }

  /** Ends the session: calls under way are cancelled, the stream detached, the peer leaves the board. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream = null;
    for (const id of [...this.#inFlight.keys()]) this.cancel(id, 'the session ended');
    if (this.#peerId !== null) this.#backend.leave(this.#peerId);
  }

  async #request(method: string, params: Record<string, unknown>, scope: RequestScope): Promise<unknown> {
    switch (method) {
      case 'initialize':
        return this.#initialize(params);
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.#backend.tools.tools };
      case 'tools/call':
        return this.#callTool(params, scope);
      case 'resources/list':
        return this.#listResources(params);
      case 'resources/templates/list':
        return {
          resourceTemplates: this.#backend.tools.resources
            .filter((route) => route.templated)
            .map((route) => ({ uriTemplate: route.uriTemplate, name: route.capabilityId, title: route.title, description: route.description })),
        };
      case 'resources/read':
        return this.#readResource(params);
      case 'resources/subscribe':
        return this.#subscribe(params);
      case 'resources/unsubscribe':
        return this.#unsubscribe(params);
      default:
        throw new RpcError(RPC.methodNotFound, `Method not found: ${method}`);
    }
  }

  async #initialize(params: Record<string, unknown>): Promise<unknown> {
    const requested = params.protocolVersion;
    if (typeof requested !== 'string') {
      throw new RpcError(RPC.invalidParams, 'Invalid params: initialize needs a protocolVersion string');
    }
    const info = isObject(params.clientInfo) ? params.clientInfo : {};
    const declared = isObject(params.capabilities) && isObject(params.capabilities.experimental) ? params.capabilities.experimental : {};
    this.#experimental = new Set(Object.keys(declared));
    // Other agents read this name: bounded, without control characters.
    const client = cleanClient(info.name, info.version);
    this.#protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    let instructions: string;
    if (this.#peerId === null) {
      const joined = await this.#backend.join(client, this.#preferredPeerId ?? null, this.#clientPids);
      this.#peerId = joined.peerId;
      instructions = joined.instructions;
    } else {
      instructions = await this.#backend.instructions(this.#peerId);
    }
    return {
      protocolVersion: this.#protocolVersion,
      // claude/channel: task notices (a question, an end) reach a client that declared it too.
      // The layer stays fresh: a reload tells the client (list_changed, updated for subscriptions).
      capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: true }, experimental: { 'claude/channel': {} } },
      serverInfo: { name: 'majordomus', version: VERSION },
      instructions,
    };
  }

  async #callTool(params: Record<string, unknown>, scope: RequestScope): Promise<unknown> {
    const { name } = params;
    if (typeof name !== 'string') throw new RpcError(RPC.invalidParams, 'Invalid params: tools/call needs a name');
    const capabilityId = this.#backend.tools.capabilityOf(name);
    if (capabilityId === undefined) throw new RpcError(RPC.invalidParams, `Unknown tool: ${name}`);
    const args = params.arguments === undefined ? {} : params.arguments;
    const { signal, notify } = scope;
    const progressToken = progressTokenOf(params);
    let ended = false;
    const call: CallContext = this.#spawnDepth === undefined ? { signal } : { signal, depth: this.#spawnDepth };
    if (progressToken !== undefined && notify !== undefined) {
      let progress = 0;
      // MCP: progress only while the request is active, and increasing with every notification.
      call.onProgress = (message) => {
        if (ended || signal.aborted) return;
        progress += 1;
        notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, message } });
      };
    }
    let outcome: CallOutcome;
    try {
      outcome = await this.#backend.invoke(capabilityId, args, this.#peerId, call);
    } finally {
      ended = true;
    }
    if (outcome.ok) return new ToolResult(outcome.json);
    if (outcome.code === 'invalid_input') throw new RpcError(RPC.invalidParams, `Invalid arguments for tool ${name}: ${outcome.message}`);
    return { content: [{ type: 'text', text: `${outcome.code}: ${outcome.message}` }], isError: true };
  }

  /** Only the layer's objects can be subscribed to: they are what a reload changes. */
  #subscribe(params: Record<string, unknown>): unknown {
    const { uri } = params;
    if (typeof uri !== 'string') throw new RpcError(RPC.invalidParams, 'Invalid params: resources/subscribe needs a uri');
    if (this.#backend.object(uri) === undefined) {
      throw new RpcError(RPC.resourceNotFound, `Resource not found: ${uri} (only the layer's objects can be subscribed to; resources/list names them)`);
    }
    this.#subscriptions.add(uri);
    return {};
  }

  /** Unsubscribing from a URI this session never subscribed to changes nothing. */
  #unsubscribe(params: Record<string, unknown>): unknown {
    const { uri } = params;
    if (typeof uri !== 'string') throw new RpcError(RPC.invalidParams, 'Invalid params: resources/unsubscribe needs a uri');
    this.#subscriptions.delete(uri);
    return {};
  }

  #listResources(params: Record<string, unknown>): unknown {
    const objects = this.#backend.objects();
    let offset = 0;
    if (params.cursor !== undefined) {
      offset = typeof params.cursor === 'string' ? Number.parseInt(Buffer.from(params.cursor, 'base64url').toString(), 10) : Number.NaN;
      if (!Number.isInteger(offset) || offset < 0 || offset > objects.length) {
        throw new RpcError(RPC.invalidParams, 'Invalid params: unknown cursor');
      }
    }
    const page = objects.slice(offset, offset + RESOURCE_PAGE);
    const resources: Array<McpResource | Omit<McpResource, 'size'>> = page.map(resourceOf);
    // Capabilities read at a fixed URI (the sessions index) head the first page.
    if (offset === 0) {
      for (const route of this.#backend.tools.resources) {
        if (!route.templated) resources.unshift({ uri: route.uriTemplate, name: route.capabilityId, title: route.title, description: route.description, mimeType: 'application/json' });
      }
    }
    const next = offset + RESOURCE_PAGE;
    return next < objects.length
      ? { resources, nextCursor: Buffer.from(String(next)).toString('base64url') }
      : { resources };
  }

  async #readResource(params: Record<string, unknown>): Promise<unknown> {
    const { uri } = params;
    if (typeof uri !== 'string') throw new RpcError(RPC.invalidParams, 'Invalid params: resources/read needs a uri');
    const object = this.#backend.object(uri);
    if (object) return { contents: [{ uri: object.uri, mimeType: object.media_type, text: object.content }] };
    for (const route of this.#backend.tools.resources) {
      const input = route.match(uri);
      if (input === null) continue;
      const outcome = await this.#backend.invoke(route.capabilityId, input, this.#peerId);
      if (!outcome.ok) {
        const code = outcome.code === 'internal' || outcome.code === 'busy' ? RPC.internalError : RPC.resourceNotFound;
        throw new RpcError(code, `${uri}: ${outcome.message}`);
      }
      return { contents: [resourceContent(uri, JSON.parse(outcome.json) as unknown, outcome.json)] };
    }
    throw new RpcError(RPC.resourceNotFound, `Resource not found: ${uri}`);
  }
}

