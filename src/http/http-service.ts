/**
 * What the HTTP thread runs (workers/http-thread.ts is its wiring): an HTTP engine (uWS, or
 * node:http where uWS cannot load: src/http/engine.ts) feeds the router; capability calls go through the dispatcher (peer board → main thread, pure queries →
 * answer cache, the rest → the pool); `/mcp` sessions use the remote backend; the model gateway
 * and the live page sit beside them. It keeps copies of what the main thread says (the leaseholder
 * flag, the peer count) so that `GET /` never waits on the main thread, and does what the main
 * thread asks over `HttpControl` (src/threads/http.ts).
 */
import { join, posix } from 'node:path';
import { CONFIG_FILE_NAME, GatewayConfigFile } from '../gateway/config.js';
import { Gateway, GATEWAY_PATHS } from '../gateway/gateway.js';
import { changedUris } from '../layer/changes.js';
import type { LayerView } from '../layer/view.js';
import { toolTable } from '../mcp/projection.js';
import type { PageTopic } from '../page/state.js';
import { hostGuard, type HostGuard } from '../platform/access.js';
import { onLogRecord } from '../platform/log.js';
import { rpcClient, type RpcClient } from '../platform/rpc.js';
import { catalogFrom } from '../registry/catalog.js';
import { urlOf } from '../shared/address.js';
import { HARNESS_CALL_TIMEOUT_MS } from '../threads/harness-call.js';
import { HARNESS_CONTROL_METHODS, NEWS_STREAM, type HarnessControl, type HarnessNews } from '../threads/harness.js';
import { HOST_CONTROL_METHODS, type HostControl, type HttpStartMessage, type HttpWorkerData } from '../threads/http.js';
import { decodeSnapshot, snapshotView } from '../threads/snapshot.js';
import { CallDispatcher } from './dispatcher.js';
import { usageReports } from './usage-reports.js';
import { LivePage } from './live-page.js';
import { McpEndpoint } from './mcp-endpoint.js';
import { openApiText } from './openapi.js';
import { RemoteMcpBackend } from './remote-backend.js';
import { createRouter, type Router } from './router.js';
import { loadSwaggerAssets } from './swagger.js';
import { startServer } from './engine.js';
import type { ListeningServer } from './server-contract.js';

/** A call to the main thread that takes longer than this fails (it never waits forever). */
const HOST_CALL_TIMEOUT_MS = 30_000;

export class HttpService {
  readonly #data: HttpWorkerData;
  readonly #host: RpcClient<HostControl>;
  readonly #harness: RpcClient<HarnessControl> | null;
  readonly #dispatcher: CallDispatcher;
  readonly #backend: RemoteMcpBackend;
  readonly #mcp: McpEndpoint;
  readonly #sweep: NodeJS.Timeout;
  readonly #gateway: Gateway;
  readonly #page: LivePage;
  readonly #route: Router;
  #server: ListeningServer | null = null;
  #started: HttpStartMessage = { type: 'failed', reason: 'not started' };
  /** Names this server's port once bound (Host and Origin must). */
  #guard: HostGuard;
  /** The layer generation this thread serves; `useSnapshot` moves it on. */
  #generation: number;
  #layer: LayerView;
  // What the main thread keeps current here, so `GET /` never waits on it.
  #leaseholder: boolean;
  #peerCount = 0;
  #stopping = false;
  #stopped: Promise<void> | null = null;
  /** Ends the subscription to the harness's news when the thread stops. */
  readonly #harnessNews = new AbortController();

  private constructor(data: HttpWorkerData) {
    this.#data = data;
    // Only the serving generation stays in memory: a later one must not keep the first alive.
    const first = decodeSnapshot(data.snapshot);
    const catalog = catalogFrom(first.capabilities);
    const { version } = first;
    const repositoryId = first.index.repository_id;
    this.#generation = first.generation;
    this.#layer = snapshotView(first);
    this.#leaseholder = data.leaseholder;
    this.#guard = hostGuard(data.host, data.port);
    this.#host = rpcClient<HostControl>(data.hostPort, HOST_CONTROL_METHODS, { timeoutMs: HOST_CALL_TIMEOUT_MS });
    this.#harness = data.harnessPort === null ? null : rpcClient<HarnessControl>(data.harnessPort, HARNESS_CONTROL_METHODS, { timeoutMs: HARNESS_CALL_TIMEOUT_MS });
    const harness = this.#harness;

    this.#dispatcher = new CallDispatcher({
      catalog,
      host: this.#host,
      harness,
      poolTaskFile: data.poolTaskFile,
      poolThreads: data.poolThreads,
      pool: { snapshot: data.snapshot, nice: data.nice, faultCapability: data.faultCapability },
      generation: this.#generation,
      answerCache: data.answerCache,
    });
    this.#backend = new RemoteMcpBackend({
      tools: toolTable(catalog),
      layer: this.#layer,
      dispatcher: this.#dispatcher,
      host: this.#host,
      onPeerCount: (count) => (this.#peerCount = count),
      harness,
    });
    this.#mcp = new McpEndpoint({
      backend: this.#backend,
      idleMs: data.idleSessionMs,
      maxSessions: data.maxSessions,
      acceptsSessions: () => this.#leaseholder && !this.#stopping,
      touch: (peerId) => this.#backend.touch(peerId),
      logs: onLogRecord,
    });
    this.#sweep = setInterval(() => this.#mcp.expireIdle(), Math.min(5_000, Math.max(50, data.idleSessionMs / 3)));
    // Turn starts and ends reach the `/mcp` sessions (subscriptions, tasks) straight from the harness thread.
    harness
      ?.callWith('news', [], {
        onEvent: (stream, news) => {
          if (stream === NEWS_STREAM) this.#mcp.harnessNews(news as HarnessNews);
        },
        signal: this.#harnessNews.signal,
        timeoutMs: Number.POSITIVE_INFINITY,
      })
      .catch(() => undefined);
    // The gateway's usage is summed where the tasks live (check_task, GET /api/v1/usage read it).
    this.#gateway = new Gateway({
      config: new GatewayConfigFile(join(data.root, data.localPath, CONFIG_FILE_NAME), posix.join(data.localPath, CONFIG_FILE_NAME)),
      token: data.token,
      report: usageReports((records) => void harness?.recordUsage(records).catch(() => undefined)),
    });
    this.#page = new LivePage({
      token: data.token,
      server: () => ({ name: 'majordomus', version, repository_id: repositoryId, leaseholder: this.#leaseholder, url: this.#url(), docs: `${this.#url()}/docs` }),
      host: this.#host,
      harness,
      guard: () => this.#guard,
    });
    const guard = (): HostGuard => this.#guard;
    this.#route = createRouter({
      catalog,
      version,
      repositoryId,
      token: data.token,
      get guard() {
        return guard();
      },
      mcp: this.#mcp,
      openapi: openApiText(catalog, version),
      swagger: loadSwaggerAssets(),
      invoke: (capabilityId, input, caller) => this.#dispatcher.invoke(capabilityId, input, caller),
      peerCount: () => this.#peerCount,
      leaseholder: () => this.#leaseholder,
      generation: () => this.#generation,
      baseUrl: () => this.#url(),
      // Requests arrive only through a server that is listening.
      engine: () => (this.#server as ListeningServer).engine,
      gateway: { paths: GATEWAY_PATHS, handle: (request) => this.#gateway.handle(request) },
      page: this.#page.assets,
    });
  }

  /** Builds every part and binds the port; `started` says whether it listens. */
  static async start(data: HttpWorkerData): Promise<HttpService> {
    const service = new HttpService(data);
    await service.#listen();
    return service;
  }

  /** What the main thread is told once the thread started: the port bound, or why none was. */
  get started(): HttpStartMessage {
    return this.#started;
  }

  setLeaseholder(leaseholder: boolean): void {
    this.#leaseholder = leaseholder;
    this.#page.changed('server');
  }

  setPeerCount(count: number): void {
    this.#peerCount = count;
  }

  notifyPeer(peerId: string, method: string, params: Record<string, unknown>, requires: string | null): boolean {
    return this.#mcp.notifyPeer(peerId, method, params, requires);
  }

  /** Serves a newer generation; an older or the same one changes nothing. */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): void {
    if (generation <= this.#generation) return;
    const before = this.#layer.index;
    const fresh = decodeSnapshot(snapshot);
    this.#layer = snapshotView(fresh);
    this.#generation = generation;
    // Every path answers from the new generation before any client hears of it.
    this.#backend.useLayer(this.#layer);
    this.#dispatcher.useSnapshot(snapshot, generation);
    this.#mcp.layerChanged(changedUris(before, fresh.index));
    this.#page.changed('host');
  }

  /** Something the live page shows changed in the main thread. */
  changed(topic: PageTopic): void {
    this.#page.changed(topic === 'server' ? 'server' : 'host');
  }

  /** Closes the socket, the sessions, the gateway and the pool, then the ports. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      clearInterval(this.#sweep);
      this.#harnessNews.abort();
      this.#page.close();
      this.#server?.close();
      this.#gateway.close();
      this.#mcp.closeAll();
      await this.#dispatcher.stop();
      this.#host.close('the HTTP thread is stopping');
      this.#harness?.close('the HTTP thread is stopping');
      // Let the answer to this call go out, then release the ports so the thread can end.
      const data = this.#data;
      setImmediate(() => {
        data.hostPort.close();
        data.controlPort.close();
        data.harnessPort?.close();
      });
    })();
    return this.#stopped;
  }

  async #listen(): Promise<void> {
    const data = this.#data;
    const started = await startServer(data.engine, {
      host: data.host,
      port: data.port,
      fallbackToFreePort: data.fallbackToFreePort,
      handle: this.#route,
      live: this.#page.route,
    });
    if (!started.ok) {
      this.#started = { type: 'failed', reason: started.reason, code: started.code };
      return;
    }
    const { server } = started;
    this.#server = server;
    this.#guard = hostGuard(data.host, server.port);
    this.#started = { type: 'listening', port: server.port, requestedPort: data.port, engine: server.engine, fallback: started.fallback };
  }

  #url(): string {
    return urlOf(this.#data.host, this.#server?.port ?? 0);
  }
}
