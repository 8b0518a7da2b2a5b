/**
 * The main thread's handle on the harness thread: starts it with the snapshot and the harness's
 * directory, forwards its own client's harness calls (a follow's lines come back as events), and
 * stops it — every running agent's group with it — along the one shutdown path.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { errorMessage, MajordomusError } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import { rpcClient } from '../platform/rpc.js';
import { startThread } from '../platform/worker.js';
import { harnessCall, HARNESS_CALL_TIMEOUT_MS } from '../threads/harness-call.js';
import type { PeerNotice } from '../peers/notice.js';
import { HARNESS_CONTROL_METHODS, NEWS_STREAM, NOTICE_STREAM, type HarnessControl, type HarnessNews, type HarnessStartMessage, type HarnessWorkerData } from '../threads/harness.js';
import { type CallContext, type CallOutcome } from '../platform/call.js';

const STOP_TIMEOUT_MS = 30_000;
/** Adopting an earlier server's sessions may stop its orphaned agents, each with its grace period. */
const START_DEADLINE_MS = 120_000;

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
  /** Hands what each turn's start or end means to readers of sessions to `tell` until the thread stops. */
  onNews(tell: (news: HarnessNews) => void): void;
  /** The depth of the running agent a client's process chain belongs to, or null (also when the thread does not answer). */
  agentDepth(pids: readonly number[]): Promise<number | null>;
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
    killGraceMs: config.killGraceMs,
  };
  const control = rpcClient<HarnessControl>(main.port1, HARNESS_CONTROL_METHODS, {
    timeoutMs: HARNESS_CALL_TIMEOUT_MS,
    timeouts: { stop: STOP_TIMEOUT_MS },
  });
  const worker = startThread({
    name: 'the harness thread',
    file: new URL('../../workers/harness-thread.js', import.meta.url),
    workerData,
    transferList: [main.port2, http.port2],
    shutdown: () => control.stop(),
    afterStop: () => {
      control.close('the harness thread has stopped');
      main.port1.close();
    },
    onError: (error) => log.error(`harness thread failed: ${error.stack ?? error.message}`),
  });
  const started = await worker.started<HarnessStartMessage>(START_DEADLINE_MS, (reason) => ({ type: 'failed', reason }));
  if (started.type === 'failed') {
    await worker.terminate();
    http.port1.close();
    throw new MajordomusError('MAJ_INTERNAL', started.reason);
  }
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
      await worker.untilExit(control.useSnapshot(snapshot, generation));
    },
    onNotice(deliver) {
      const onEvent = (stream: string, data: unknown): void => {
        if (stream === NOTICE_STREAM) deliver(data as PeerNotice);
      };
      control.callWith('notices', [], { onEvent, timeoutMs: Number.POSITIVE_INFINITY }).catch(() => undefined);
    },
    agentDepth: (pids) => control.agentDepth([...pids]).catch(() => null),
    onNews(tell) {
      const onEvent = (stream: string, data: unknown): void => {
        if (stream === NEWS_STREAM) tell(data as HarnessNews);
      };
      control.callWith('news', [], { onEvent, timeoutMs: Number.POSITIVE_INFINITY }).catch(() => undefined);
    },
    stop: () => worker.stop(),
  };
  return thread;
}
