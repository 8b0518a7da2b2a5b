/**
 * The HTTP thread, as wiring: the uWS adapter feeds the router; capability calls go through the
 * dispatcher (peer board → main thread, pure queries → answer cache, the rest → the pool); `/mcp`
 * sessions use the remote backend. The main thread drives it through `HttpControl`.
 */
import { join, posix } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { CONFIG_FILE_NAME, GatewayConfigFile } from '../src/gateway/config.js';
import { CHAT_COMPLETIONS_PATH, Gateway, MODELS_PATH } from '../src/gateway/gateway.js';
import { CallDispatcher } from '../src/http/dispatcher.js';
import { hostGuard } from '../src/platform/access.js';
import { McpEndpoint } from '../src/http/mcp-endpoint.js';
import { openApiText } from '../src/http/openapi.js';
import { RemoteMcpBackend } from '../src/http/remote-backend.js';
import { createRouter } from '../src/http/router.js';
import { loadSwaggerAssets } from '../src/http/swagger.js';
import { UwsServer } from '../src/http/uws-server.js';
import { urlOf } from '../src/shared/address.js';
import { changedUris } from '../src/layer/changes.js';
import { toolTable } from '../src/mcp/projection.js';
import { catalogFrom } from '../src/registry/catalog.js';
import { rpcClient, serveRpc } from '../src/platform/rpc.js';
import { decodeSnapshot, snapshotView, type SnapshotContent } from '../src/threads/snapshot.js';
import { HARNESS_CONTROL_METHODS, type HarnessControl } from '../src/threads/harness.js';
import { HOST_CONTROL_METHODS, type HostControl, type HttpControl, type HttpStartMessage, type HttpWorkerData } from '../src/threads/http.js';
import { HARNESS_CALL_TIMEOUT_MS } from '../src/threads/harness-call.js';
import { yieldToMainThread } from '../src/platform/priority.js';
import { loadPageAssets, type PageAssets } from '../src/page/assets.js';
import { errorMessage } from '../src/platform/errors.js';
import { log } from '../src/platform/log.js';
import { LiveFeed, MAX_FRAME_BYTES } from '../src/page/feed.js';
import { errorReply } from '../src/platform/http-exchange.js';
import { LIVE_PATH } from '../src/http/router.js';
import { CHANGE_STREAM } from '../src/threads/harness.js';

/** A call to the main thread that takes longer than this fails (it never waits forever). */
const HOST_CALL_TIMEOUT_MS = 30_000;

const data = workerData as HttpWorkerData;
yieldToMainThread(data.nice);

let content: SnapshotContent | undefined = decodeSnapshot(data.snapshot);
const catalog = catalogFrom(content.capabilities);
const { version } = content;
const repositoryId = content.index.repository_id;
/** The layer generation this thread serves; `HttpControl.useSnapshot` moves it on. */
let generation = content.generation;
let layer = snapshotView(content);
// Only the serving generation stays in memory: a later one must not keep the first alive.
content = undefined;
const host = rpcClient<HostControl>(data.hostPort, HOST_CONTROL_METHODS, { timeoutMs: HOST_CALL_TIMEOUT_MS });
const harness = data.harnessPort === null ? null : rpcClient<HarnessControl>(data.harnessPort, HARNESS_CONTROL_METHODS, { timeoutMs: HARNESS_CALL_TIMEOUT_MS });

/** What the main thread keeps current here, so `GET /` never waits on it. */
const state = { leaseholder: data.leaseholder, peerCount: 0, stopping: false, port: 0 };

const dispatcher = new CallDispatcher({
  catalog,
  host,
  harness,
  poolTaskFile: data.poolTaskFile,
  poolThreads: data.poolThreads,
  pool: { snapshot: data.snapshot, nice: data.nice, faultCapability: data.faultCapability },
  generation,
  answerCache: data.answerCache,
});
const backend = new RemoteMcpBackend({
  tools: toolTable(catalog),
  layer,
  dispatcher,
  host,
  onPeerCount: (count) => (state.peerCount = count),
});
const mcp = new McpEndpoint({
  backend,
  idleMs: data.idleSessionMs,
  maxSessions: data.maxSessions,
  acceptsSessions: () => state.leaseholder && !state.stopping,
  touch: (peerId) => backend.touch(peerId),
});
const sweep = setInterval(() => mcp.expireIdle(), Math.min(5_000, Math.max(50, data.idleSessionMs / 3)));

// The gateway's usage is summed where the tasks live (check_task, GET /api/v1/usage read it).
const gateway = new Gateway({
  config: new GatewayConfigFile(join(data.root, data.localPath, CONFIG_FILE_NAME), posix.join(data.localPath, CONFIG_FILE_NAME)),
  token: data.token,
  report: (record) => void harness?.recordUsage(record).catch(() => undefined),
});

let guard = hostGuard(data.host, data.port);

/** The live page's files; a package without them still serves everything else (GET / answers JSON). */
function pageAssets(): PageAssets | undefined {
  try {
    return loadPageAssets();
  } catch (error) {
    log.warn(`the live page is unavailable: ${errorMessage(error)}`);
    return undefined;
  }
}

// The live page: its files, and its feed over a WebSocket (src/page/feed.ts).
const feed = new LiveFeed({
  token: data.token,
  server: () => ({
    name: 'majordomus',
    version,
    repository_id: repositoryId,
    leaseholder: state.leaseholder,
    url: urlOf(data.host, state.port),
    docs: `${urlOf(data.host, state.port)}/docs`,
  }),
  host: () => host.pageState(),
  harness: harness === null ? null : () => harness.pageState(),
});
// The harness tells of each change the page shows (a transcript grew, a turn ended): one
// subscription for the thread's life, ended when either thread stops.
const harnessChanges = new AbortController();
harness
  ?.callWith('changes', [], {
    onEvent: (stream) => {
      if (stream === CHANGE_STREAM) feed.changed('harness');
    },
    signal: harnessChanges.signal,
    timeoutMs: Number.POSITIVE_INFINITY,
  })
  .catch(() => undefined);
const route = createRouter({
  catalog,
  version,
  repositoryId,
  token: data.token,
  get guard() {
    return guard;
  },
  mcp,
  openapi: openApiText(catalog, version),
  swagger: loadSwaggerAssets(),
  invoke: (capabilityId, input, caller) => dispatcher.invoke(capabilityId, input, caller),
  peerCount: () => state.peerCount,
  leaseholder: () => state.leaseholder,
  generation: () => generation,
  baseUrl: () => urlOf(data.host, state.port),
  gateway: { paths: new Set([CHAT_COMPLETIONS_PATH, MODELS_PATH]), handle: (request) => gateway.handle(request) },
  page: pageAssets(),
});

const started = await UwsServer.start({
  host: data.host,
  port: data.port,
  fallbackToFreePort: data.fallbackToFreePort,
  handle: route,
  live: {
    path: LIVE_PATH,
    maxFrameBytes: MAX_FRAME_BYTES,
    refusal: (hostHeader, origin) => {
      const refused = guard.refusal(hostHeader, origin);
      if (refused !== null) return errorReply('forbidden', refused);
      return feed.full ? errorReply('busy', 'too many live pages are open; close one') : null;
    },
    open: (socket) => feed.open(socket),
  },
});
const server = started.ok ? started.server : null;
if (server) {
  state.port = server.port;
  guard = hostGuard(data.host, server.port);
}

let stopped: Promise<void> | null = null;
const control: HttpControl = {
  async setLeaseholder(value) {
    state.leaseholder = value;
    feed.changed('server');
  },
  async setPeerCount(count) {
    state.peerCount = count;
  },
  async notifyPeer(peerId, method, params, requires) {
    return mcp.notifyPeer(peerId, method, params, requires);
  },
  async useSnapshot(snapshot, next) {
    if (next <= generation) return;
    const before = layer.index;
    const fresh = decodeSnapshot(snapshot);
    layer = snapshotView(fresh);
    generation = next;
    // Every path answers from the new generation before any client hears of it.
    backend.useLayer(layer);
    dispatcher.useSnapshot(snapshot, next);
    mcp.layerChanged(changedUris(before, fresh.index));
    feed.changed('host');
  },
  stop() {
    stopped ??= (async () => {
      state.stopping = true;
      clearInterval(sweep);
      harnessChanges.abort();
      feed.close();
      server?.close();
      gateway.close();
      mcp.closeAll();
      await dispatcher.stop();
      host.close('the HTTP thread is stopping');
      harness?.close('the HTTP thread is stopping');
      // Let the answer to this call go out, then release the ports so the thread can end.
      setImmediate(() => {
        data.hostPort.close();
        data.controlPort.close();
        data.harnessPort?.close();
      });
    })();
    return stopped;
  },
  async changed(topic) {
    feed.changed(topic === 'server' ? 'server' : 'host');
  },
};
serveRpc<HttpControl>(data.controlPort, control);

const message: HttpStartMessage = server
  ? { type: 'listening', port: server.port, requestedPort: data.port }
  : { type: 'failed', reason: started.ok ? 'unreachable' : started.reason };
parentPort?.postMessage(message);
if (!server) await control.stop();
