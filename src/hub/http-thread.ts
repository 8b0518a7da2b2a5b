/**
 * The main thread's handle on the HTTP thread: encodes the snapshot once, starts the thread,
 * serves it the peer board (`HostControl`), and stops it along the one shutdown path.
 */
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { MajordomusError } from '../platform/errors.js';
import { urlOf } from '../shared/address.js';
import { log } from '../platform/log.js';
import type { Runtime } from '../runtime/runtime.js';
import { settings } from '../platform/settings.js';
import { rpcClient, serveRpc, type RpcServed } from '../platform/rpc.js';
import { startThread } from '../platform/worker.js';
import { HTTP_CONTROL_METHODS, type HostControl, type HttpControl, type HttpStartMessage, type HttpWorkerData } from '../threads/http.js';
import { PROGRESS_STREAM } from '../platform/call.js';
import { pageHostState } from '../page/host-state.js';
import type { PageTopic } from '../page/state.js';
import { joinWithInstructions, runtimeInstructions } from '../mcp/instructions.js';
import { runtimeSnapshot } from '../threads/snapshot.js';

/** Control calls are quick; stopping the thread may take a while on a loaded machine. */
const CONTROL_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 30_000;
/** Binding, and starting the pool, take well under a second; a loaded machine gets far longer. */
const START_DEADLINE_MS = 60_000;

/** What the caller decides of the thread's start data (src/threads/http.ts says what each is); the rest comes from the settings. */
export interface HttpThreadOptions extends Pick<HttpWorkerData, 'host' | 'port' | 'fallbackToFreePort' | 'leaseholder' | 'token' | 'root' | 'localPath'> {
  /** Called when the thread ends without being asked to (a crash). */
  onUnexpectedExit?: (why: string) => void;
  /** The snapshot, when the caller encoded it already (the shared server shares it with the harness). */
  snapshot?: SharedArrayBuffer;
  /** The HTTP thread's channel to the harness thread (transferred), when the server has one. */
  harnessPort?: MessagePort | null;
}

export interface HttpThread {
  readonly port: number;
  readonly url: string;
  /** The port asked for, when it was taken and another was bound. */
  readonly fellBackFrom: number | null;
  setLeaseholder(leaseholder: boolean): Promise<void>;
  /** Keeps the HTTP thread's copy of the peer count (for `GET /`) current. */
  setPeerCount(count: number): Promise<void>;
  /** Sends a notification to a peer served over `/mcp`; false when none of its sessions took it. */
  notifyPeer(peerId: string, method: string, params: Record<string, unknown>, requires: string | null): Promise<boolean>;
  /** Closes the socket, the sessions and the pool, and waits for the thread to end. Safe to call twice. */
  stop(): Promise<void>;
  /** Serves a new generation of the layer (see `HttpControl.useSnapshot`); resolves once it does. */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): Promise<void>;
  /** Tells open live pages that `topic` changed (fire and forget). */
  changed(topic: PageTopic): void;
}

/** What the main thread serves the HTTP thread, over its runtime. */
export function hostControl(runtime: Runtime): RpcServed<HostControl> {
  return {
    // The call's scope becomes its CallContext: progress goes back as events (when the caller
    // listens), a cancel aborts it.
    invoke: async (capabilityId, input, caller, scope) =>
      runtime.outcome(capabilityId, input, caller, {
        ...(scope.listening ? { onProgress: (message: string) => scope.emit(PROGRESS_STREAM, message) } : {}),
        signal: scope.signal,
      }),
    join: async (client, preferred, pids) => {
      const joined = joinWithInstructions(runtime, client, 'http', preferred ?? undefined, pids);
      return { ...joined, peers: runtime.board?.size ?? 0 };
    },
    leave: async (peerId) => {
      runtime.leave(peerId);
      return runtime.board?.size ?? 0;
    },
    touch: async (peerId) => runtime.board?.touch(peerId),
    instructions: async (peerId) => runtimeInstructions(runtime, peerId),
    pageState: async () => pageHostState(runtime),
  };
}

export async function startHttpThread(runtime: Runtime, options: HttpThreadOptions): Promise<HttpThread> {
  const snapshot = options.snapshot ?? runtimeSnapshot(runtime);
  const hostChannel = new MessageChannel();
  const controlChannel = new MessageChannel();
  serveRpc<HostControl>(hostChannel.port1, hostControl(runtime));
  const config = settings();
  const workerData: HttpWorkerData = {
    snapshot,
    host: options.host,
    port: options.port,
    fallbackToFreePort: options.fallbackToFreePort,
    leaseholder: options.leaseholder,
    token: options.token,
    root: options.root,
    localPath: options.localPath,
    hostPort: hostChannel.port2,
    controlPort: controlChannel.port2,
    harnessPort: options.harnessPort ?? null,
    poolTaskFile: fileURLToPath(new URL('../../workers/pool-task.js', import.meta.url)),
    poolThreads: config.poolThreads,
    idleSessionMs: config.idleSessionMs,
    maxSessions: config.maxSessions,
    answerCache: config.answerCache,
    nice: config.httpNice,
    faultCapability: config.faultCapability,
    engine: config.httpEngine,
  };
  const control = rpcClient<HttpControl>(controlChannel.port1, HTTP_CONTROL_METHODS, {
    timeoutMs: CONTROL_TIMEOUT_MS,
    timeouts: { stop: STOP_TIMEOUT_MS },
  });
  const worker = startThread({
    name: 'the HTTP thread',
    file: new URL('../../workers/http-thread.js', import.meta.url),
    workerData,
    transferList: [hostChannel.port2, controlChannel.port2, ...(options.harnessPort ? [options.harnessPort] : [])],
    shutdown: () => control.stop(),
    afterStop: () => {
      control.close('the HTTP thread has stopped');
      hostChannel.port1.close();
      controlChannel.port1.close();
    },
    onError: (error) => log.error(`HTTP thread failed: ${error.stack ?? error.message}`),
  });
  // A thread that ends (or stays silent) before it is ready failed in a way no port explains.
  const started = await worker.started<HttpStartMessage>(START_DEADLINE_MS, (reason) => ({ type: 'failed', reason, code: 'MAJ_INTERNAL' }));
  if (started.type === 'failed') {
    // A thread whose listen failed ends by itself (its stop is under way); its ports are released with it.
    await worker.stop();
    throw new MajordomusError(started.code ?? 'MAJ_PORT_UNAVAILABLE', started.reason);
  }
  if (started.fallback !== null) log.warn(started.fallback);
  if (options.onUnexpectedExit) worker.onUnexpectedExit(options.onUnexpectedExit);
  const { untilExit } = worker;
  const thread: HttpThread = {
    port: started.port,
    url: urlOf(options.host, started.port),
    fellBackFrom: started.port !== started.requestedPort && started.requestedPort !== 0 ? started.requestedPort : null,
    setLeaseholder: async (leaseholder) => {
      await untilExit(control.setLeaseholder(leaseholder));
    },
    setPeerCount: async (count) => {
      await untilExit(control.setPeerCount(count));
    },
    useSnapshot: async (snapshot, generation) => {
      await untilExit(control.useSnapshot(snapshot, generation));
    },
    notifyPeer: async (peerId, method, params, requires) => (await untilExit(control.notifyPeer(peerId, method, params, requires))) === true,
    changed: (topic) => {
      if (!worker.stopping) void untilExit(control.changed(topic));
    },
    stop: () => worker.stop(),
  };
  return thread;
}
