/**
 * The HTTP thread: uWebSockets.js serving the HTTP projection, started once by the main thread and
 * living as long as the server. Capability calls run in a piscina pool over the snapshot; calls
 * that read the peer board go to the main thread, which owns it. Before this thread ends it closes
 * the listen socket and the app: a uWS app left open in an ending thread aborts the process.
 */
import { workerData, parentPort } from 'node:worker_threads';
import uWS from '@trufflesuite/uws-js-unofficial';
import { expose, wrap } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Piscina } from 'piscina';
import { CapabilityError, errorMessage } from '../src/errors.js';
import { urlOf } from '../src/http/address.js';
import { AnswerCache } from '../src/http/answer-cache.js';
import { Batcher } from '../src/http/batcher.js';
import { hostGuard } from '../src/http/guard.js';
import { McpEndpoint } from '../src/http/mcp-endpoint.js';
import { openApiText } from '../src/http/openapi.js';
import { errorReply, type HttpReply } from '../src/http/reply.js';
import { createRouter, MAX_BODY_BYTES, type HttpRequest } from '../src/http/router.js';
import { loadSwaggerAssets } from '../src/http/swagger.js';
import { decodeSnapshot } from '../src/layer/snapshot.js';
import { createLayerView } from '../src/layer/view.js';
import { toolTable } from '../src/mcp/projection.js';
import type { McpBackend } from '../src/mcp/session.js';
import { catalogFrom } from '../src/registry/catalog.js';
import { yieldToMainThread } from './priority.js';
import type { CallOutcome, HostControl, HttpControl, HttpStartMessage, HttpWorkerData, PoolTask } from './types.js';

yieldToMainThread();

const data = workerData as HttpWorkerData;
const content = decodeSnapshot(data.snapshot);
const catalog = catalogFrom(content.capabilities);
const layer = createLayerView(content.index);
const host = wrap<HostControl>(nodeEndpoint(data.hostPort as never));
const pool = new Piscina<PoolTask[], CallOutcome[]>({
  filename: data.poolTaskFile,
  name: 'runCapabilities',
  workerData: { snapshot: data.snapshot },
  minThreads: data.poolThreads,
  maxThreads: data.poolThreads,
  // The batcher bounds the calls waiting (4,096); batches never outnumber them.
  maxQueue: 4096,
  idleTimeout: Number.POSITIVE_INFINITY,
});

let leaseholder = data.leaseholder;
let peerCount = 0;
let stopping = false;
let boundPort = 0;
let listenSocket: uWS.us_listen_socket | null = null;

const answers = data.answerCache ? new AnswerCache({ maxEntries: 1024, maxAnswerChars: 256 * 1024, maxTotalChars: 32 * 1024 * 1024 }) : null;

// One pool task per turn of the event loop, carrying every call that arrived in it.
const batches = new Batcher<PoolTask, CallOutcome>(
  (tasks) => pool.run(tasks),
  // piscina refuses when its queue is full or it is closing: the server is saturated.
  (error) => ({ ok: false, code: 'busy', message: `the capability pool is saturated: ${errorMessage(error)}` }),
  { parallelism: data.poolThreads, maxBatch: 64, maxPending: 4096 },
);

function runInPool(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome> {
  return batches.submit({ capabilityId, input, caller });
}

async function invoke(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome> {
  if (stopping) return { ok: false, code: 'busy', message: 'the server is shutting down' };
  const entry = catalog.byId(capabilityId);
  if (entry?.reads === 'peers') return host.invoke(capabilityId, input, caller);
  // A query over the frozen snapshot answers the same for the same input while the server lives.
  if (answers && entry?.kind === 'query') return answers.answer(capabilityId, input, () => runInPool(capabilityId, input, null));
  return runInPool(capabilityId, input, caller);
}

const lastTouch = new Map<string, number>();
function touch(peerId: string): void {
  const now = Date.now();
  if ((lastTouch.get(peerId) ?? 0) > now - 1000) return;
  lastTouch.set(peerId, now);
  void host.touch(peerId);
}

const backend: McpBackend = {
  tools: toolTable(catalog),
  async invoke(capabilityId, args, caller) {
    const outcome = await invoke(capabilityId, args, caller);
    if (!outcome.ok) throw new CapabilityError(outcome.code, outcome.message);
    return outcome.json;
  },
  objects: () => layer.index.objects,
  object: (uri) => layer.get(uri),
  join: async (client, preferred) => {
    const joined = await host.join(client, preferred);
    peerCount = joined.peers;
    return joined.peerId;
  },
  leave: (peerId) => {
    lastTouch.delete(peerId);
    void host.leave(peerId).then((peers) => (peerCount = peers));
  },
  instructions: (peerId) => host.instructions(peerId),
};

const mcp = new McpEndpoint({
  backend,
  idleMs: data.idleSessionMs,
  acceptsSessions: () => leaseholder && !stopping,
  touch,
});
const sweep = setInterval(() => mcp.expireIdle(), Math.min(5_000, Math.max(50, data.idleSessionMs / 3)));

let guard = hostGuard(data.host, data.port);
const route = createRouter({
  catalog,
  version: content.version,
  repositoryId: content.index.repository_id,
  get guard() {
    return guard;
  },
  mcp,
  openapi: openApiText(catalog, content.version),
  swagger: loadSwaggerAssets(),
  invoke,
  peerCount: () => peerCount,
  leaseholder: () => leaseholder,
  baseUrl: () => urlOf(data.host, boundPort),
});

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  204: '204 No Content',
  400: '400 Bad Request',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  422: '422 Unprocessable Entity',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

function write(res: uWS.HttpResponse, reply: HttpReply, head: boolean, closeConnection = false): void {
  res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
  res.writeHeader('Cache-Control', 'no-store');
  if (reply.contentType) res.writeHeader('Content-Type', reply.contentType);
  for (const [name, value] of reply.headers ?? []) res.writeHeader(name, value);
  if (reply.status === 204) {
    res.endWithoutBody(); // RFC 9110: a 204 carries no Content-Length.
  } else if (head) {
    res.endWithoutBody(typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength, closeConnection);
  } else {
    res.end(reply.body, closeConnection);
  }
}

const EMPTY = new Uint8Array(0);
/** An oversized body is drained up to this much before the connection is cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

function serve(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
  const method = req.getCaseSensitiveMethod().toUpperCase();
  const head = method === 'HEAD';
  const request: HttpRequest = {
    method: head ? 'GET' : method,
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    host: req.getHeader('host'),
    origin: req.getHeader('origin'),
    sessionId: req.getHeader('mcp-session-id'),
    peerHint: req.getHeader('mcp-peer-id'),
    body: EMPTY,
  };
  const declared = req.getHeader('content-length');
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const respond = (reply: HttpReply, closeConnection = false): void => {
    if (aborted) return;
    aborted = true;
    res.cork(() => write(res, reply, head, closeConnection));
  };
  const dispatch = (): void => {
    route(request).then(respond, (error: unknown) => respond(errorReply('internal', errorMessage(error))));
  };

  if (declared !== '' && Number(declared) > DRAIN_LIMIT_BYTES) {
    // Not worth reading: answer now and close the connection.
    respond(errorReply('too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`), true);
    return;
  }
  let tooLarge = declared !== '' && Number(declared) > MAX_BODY_BYTES;
  if (!tooLarge && (method === 'GET' || head || (method === 'DELETE' && declared === ''))) {
    dispatch();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (aborted) return;
    size += chunk.byteLength;
    tooLarge ||= size > MAX_BODY_BYTES;
    if (tooLarge) {
      // The rest is read and dropped, so the client reads the 413 instead of a reset connection;
      // a body past the drain limit is cut off with the answer.
      const cutOff = !isLast && size > DRAIN_LIMIT_BYTES;
      if (isLast || cutOff) respond(errorReply('too_large', `the body is larger than ${MAX_BODY_BYTES} bytes`), cutOff);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      request.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      dispatch();
    }
  });
}

/** What this uWS build has beyond its published typings: `close()` and listen with options. */
interface UwsApp {
  close(): void;
  listen(host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void): UwsApp;
}

// uWS shares a port with other processes (SO_REUSEPORT) unless told otherwise.
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

const app = uWS.App().any('/*', serve) as unknown as UwsApp;

function listen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    app.listen(data.host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) return resolve(null);
      listenSocket = socket;
      resolve(uWS.us_socket_local_port(socket));
    });
  });
}

async function start(): Promise<HttpStartMessage> {
  let port = await listen(data.port);
  if (port === null && data.fallbackToFreePort && data.port !== 0) port = await listen(0);
  if (port === null) return { type: 'failed', reason: `cannot listen on ${data.host}:${data.port}` };
  boundPort = port;
  guard = hostGuard(data.host, port);
  return { type: 'listening', port, requestedPort: data.port };
}

let stopped: Promise<void> | null = null;

const control: HttpControl = {
  async setLeaseholder(value) {
    leaseholder = value;
  },
  async setPeerCount(count) {
    peerCount = count;
  },
  stop() {
    stopped ??= (async () => {
      stopping = true;
      clearInterval(sweep);
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      mcp.closeAll();
      app.close();
      await pool.destroy();
      // Let the answer to this call go out, then release the ports so the thread can end.
      setImmediate(() => {
        data.hostPort.close();
        data.controlPort.close();
      });
    })();
    return stopped;
  },
};
expose(control, nodeEndpoint(data.controlPort as never));

const started = await start();
parentPort?.postMessage(started);
if (started.type === 'failed') await control.stop();
