/**
 * The main thread's handle on the HTTP thread: encodes the snapshot once, starts the thread,
 * offers it the peer board over comlink, and stops it along the one shutdown path.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { expose, wrap, type Remote } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { MajordomusError } from '../errors.js';
import { urlOf } from './address.js';
import { encodeSnapshot } from '../layer/snapshot.js';
import { log } from '../log.js';
import { onExit } from '../runtime/exit-hooks.js';
import type { Runtime } from '../runtime/runtime.js';
import { VERSION } from '../version.js';
import type { HostControl, HttpControl, HttpStartMessage, HttpWorkerData } from '../../workers/types.js';

export const IDLE_SESSION_MS = 90_000;

export interface HttpThreadOptions {
  host: string;
  port: number;
  fallbackToFreePort: boolean;
  leaseholder: boolean;
  /** Called when the thread ends without being asked to (a crash). */
  onUnexpectedExit?: (why: string) => void;
}

export interface HttpThread {
  readonly port: number;
  readonly url: string;
  /** The port asked for, when it was taken and another was bound. */
  readonly fellBackFrom: number | null;
  setLeaseholder(leaseholder: boolean): Promise<void>;
  /** Keeps the HTTP thread's copy of the peer count (for `GET /`) current. */
  setPeerCount(count: number): Promise<void>;
  /** Closes the socket, the sessions and the pool, and waits for the thread to end. Safe to call twice. */
  stop(): Promise<void>;
}

/** Pool threads: leave one core for the main thread's stdio session and one for the HTTP thread. */
export function defaultPoolThreads(): number {
  const fromEnv = Number(process.env.MAJORDOMUS_POOL_THREADS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.max(1, availableParallelism() - 1);
}

function hostControl(runtime: Runtime): HostControl {
  return {
    invoke: async (capabilityId, input, caller) => runtime.outcome(capabilityId, input, caller),
    join: async (client, preferred) => {
      const peerId = runtime.join(client, 'http', preferred);
      return { peerId, peers: runtime.board?.size ?? 0 };
    },
    leave: async (peerId) => {
      runtime.leave(peerId);
      return runtime.board?.size ?? 0;
    },
    touch: async (peerId) => runtime.board?.touch(peerId),
    instructions: async (peerId) => runtime.instructions(peerId),
  };
}

export async function startHttpThread(runtime: Runtime, options: HttpThreadOptions): Promise<HttpThread> {
  const snapshot = encodeSnapshot({ version: VERSION, index: runtime.layer.index, capabilities: runtime.registry.catalog.entries });
  const hostChannel = new MessageChannel();
  const controlChannel = new MessageChannel();
  expose(hostControl(runtime), nodeEndpoint(hostChannel.port1 as never));
  const workerData: HttpWorkerData = {
    snapshot,
    host: options.host,
    port: options.port,
    fallbackToFreePort: options.fallbackToFreePort,
    poolThreads: defaultPoolThreads(),
    leaseholder: options.leaseholder,
    hostPort: hostChannel.port2,
    controlPort: controlChannel.port2,
    poolTaskFile: fileURLToPath(new URL('../../workers/pool-task.js', import.meta.url)),
    idleSessionMs: Number(process.env.MAJORDOMUS_IDLE_SESSION_MS) || IDLE_SESSION_MS,
    answerCache: process.env.MAJORDOMUS_ANSWER_CACHE !== '0',
  };
  const worker = new Worker(new URL('../../workers/http-thread.js', import.meta.url), {
    workerData,
    transferList: [hostChannel.port2, controlChannel.port2],
  });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  worker.on('error', (error) => log.error(`HTTP thread failed: ${error.stack ?? error.message}`));

  const started = await new Promise<HttpStartMessage>((resolve) => {
    worker.once('message', (message: HttpStartMessage) => resolve(message));
    void exited.then((code) => resolve({ type: 'failed', reason: `the HTTP thread ended (code ${code}) before listening` }));
  });
  const control: Remote<HttpControl> = wrap<HttpControl>(nodeEndpoint(controlChannel.port1 as never));
  const closePorts = (): void => {
    hostChannel.port1.close();
    controlChannel.port1.close();
  };
  if (started.type === 'failed') {
    await exited;
    closePorts();
    throw new MajordomusError('MAJ_PORT_UNAVAILABLE', started.reason);
  }

  let stopping: Promise<void> | null = null;
  let forget = (): void => {};
  // comlink never settles a call to a thread that has gone: every control call also ends with it.
  const untilExit = <T>(call: Promise<T>): Promise<T | void> => Promise.race([call.catch(() => undefined), exited.then(() => undefined)]);
  void exited.then((code) => {
    if (stopping !== null) return;
    forget();
    options.onUnexpectedExit?.(`exit code ${code}`);
  });
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
    stop() {
      stopping ??= (async () => {
        await untilExit(control.stop());
        await exited;
        closePorts();
        forget();
      })();
      return stopping;
    },
  };
  forget = onExit(() => thread.stop());
  return thread;
}
