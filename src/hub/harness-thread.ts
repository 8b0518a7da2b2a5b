/**
 * The main thread's handle on the harness thread: starts it with the snapshot and the harness's
 * directory, forwards its own client's harness calls (a follow's lines come back as events), and
 * stops it — every running agent's group with it — along the one shutdown path.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { errorMessage, MajordomusError } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { onExit } from '../platform/exit-hooks.js';
import { settings } from '../platform/settings.js';
import { rpcClient } from '../platform/rpc.js';
import { harnessCall, HARNESS_CALL_TIMEOUT_MS } from '../threads/harness-call.js';
import type { PeerNotice } from '../peers/notice.js';
import { HARNESS_CONTROL_METHODS, NOTICE_STREAM, type HarnessControl, type HarnessStartMessage, type HarnessWorkerData } from '../threads/harness.js';
import { type CallContext, type CallOutcome } from '../platform/call.js';

const STOP_TIMEOUT_MS = 30_000;

export interface HarnessThreadOptions {
  snapshot: SharedArrayBuffer;
  /** `<local>/state/harness` of the checkout. */
  harnessDir: string;
}

export interface HarnessThread {
  /** The HTTP thread's end of its own channel to the harness (transfer it once). */
  readonly httpPort: MessagePort;
  invoke(capabilityId: string, input: unknown, caller: string | null, call?: CallContext): Promise<CallOutcome>;
  /** Hands every notice for a peer to `deliver` until the thread stops. */
  onNotice(deliver: (notice: PeerNotice) => void): void;
  /** Stops every running agent, then the thread. Safe to call twice. */
  stop(): Promise<void>;
  /** Serves a new generation of the layer (profiles, policy); resolves once it does. */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): Promise<void>;
}

export async function startHarnessThread(options: HarnessThreadOptions): Promise<HarnessThread> {
  const main = new MessageChannel();
  const http = new MessageChannel();
  const config = settings();
  const workerData: HarnessWorkerData = {
    snapshot: options.snapshot,
    harnessDir: options.harnessDir,
    // This server's own depth: `MAJORDOMUS_SPAWN_DEPTH`, stamped by whoever spawned it.
    depth: config.spawnDepth ?? 0,
    mainPort: main.port2,
    httpPort: http.port2,
    nice: config.httpNice,
    faultCapability: config.faultCapability,
  };
  const worker = new Worker(new URL('../../workers/harness-thread.js', import.meta.url), {
    workerData,
    transferList: [main.port2, http.port2],
  });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  worker.on('error', (error) => log.error(`harness thread failed: ${error.stack ?? error.message}`));
  const started = await new Promise<HarnessStartMessage>((resolve) => {
    worker.once('message', (message: HarnessStartMessage) => resolve(message));
    void exited.then((code) => resolve({ type: 'failed', reason: `the harness thread ended (code ${code}) before it was ready` }));
  });
  const control = rpcClient<HarnessControl>(main.port1, HARNESS_CONTROL_METHODS, {
    timeoutMs: HARNESS_CALL_TIMEOUT_MS,
    timeouts: { stop: STOP_TIMEOUT_MS },
  });
  if (started.type === 'failed') {
    await worker.terminate();
    main.port1.close();
    http.port1.close();
    throw new MajordomusError('MAJ_INTERNAL', started.reason);
  }
  let stopping: Promise<void> | null = null;
  let forget = (): void => {};
  const thread: HarnessThread = {
    httpPort: http.port1,
    invoke: async (capabilityId, input, caller, call = {}) => {
      try {
        return await harnessCall(control, capabilityId, input, caller, call);
      } catch (error) {
        if (call.signal?.aborted) return { ok: false, code: 'internal', message: 'the call was cancelled' };
        return { ok: false, code: 'internal', message: `the harness thread did not answer: ${errorMessage(error)}` };
      }
    },
    useSnapshot: async (snapshot, generation) => {
      await Promise.race([control.useSnapshot(snapshot, generation).catch(() => undefined), exited]);
    },
    onNotice(deliver) {
      const onEvent = (stream: string, data: unknown): void => {
        if (stream === NOTICE_STREAM) deliver(data as PeerNotice);
      };
      control.callWith('notices', [], { onEvent, timeoutMs: Number.POSITIVE_INFINITY }).catch(() => undefined);
    },
    stop() {
      stopping ??= (async () => {
        await Promise.race([control.stop().catch(() => undefined), exited]);
        await exited;
        control.close('the harness thread has stopped');
        main.port1.close();
        forget();
      })();
      return stopping;
    },
  };
  forget = onExit(() => thread.stop());
  return thread;
}
