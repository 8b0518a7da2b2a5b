/**
 * The harness thread: the one place of a shared server that owns the checkout's session table.
 * Agent processes, their pipes and the parsing of their event streams live here, off the owner's
 * stdio path (invariant 3). The main thread (its own stdio client) and the HTTP thread (every
 * `/mcp` and REST caller) each reach it over their own port; a follow's lines travel back as
 * events of the call.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../src/platform/errors.js';
import { SessionStore } from '../src/harness/store.js';
import { Harness } from '../src/harness/table.js';
import { TaskBoard } from '../src/tasks/board.js';
import { type PeerNotice } from '../src/peers/notice.js';
import { log } from '../src/platform/log.js';
import { BUILTIN_CAPABILITIES } from '../src/capabilities/index.js';
import { buildRegistry } from '../src/registry/registry.js';
import { Runtime } from '../src/runtime/runtime.js';
import { serveRpc, type RpcServed } from '../src/platform/rpc.js';
import { decodeSnapshot, snapshotView } from '../src/threads/snapshot.js';
import type { LayerView } from '../src/layer/view.js';
import { pageHarnessState } from '../src/page/harness-state.js';
import { CHANGE_STREAM, NOTICE_STREAM, type HarnessControl, type HarnessStartMessage, type HarnessWorkerData } from '../src/threads/harness.js';
import { PROGRESS_STREAM } from '../src/platform/call.js';
import { yieldToMainThread } from '../src/platform/priority.js';

const data = workerData as HarnessWorkerData;
// Agents inherit this thread's priority: they yield the CPU to the owner's own client too.
yieldToMainThread(data.nice);

// The first generation, until the harness and the runtime hold it: a later one must not keep it alive.
let first: { layer: LayerView; generation: number } | null = (() => {
  const content = decodeSnapshot(data.snapshot);
  return { layer: snapshotView(content), generation: content.generation };
})();
let generation = first.generation;
/** The main thread's subscriptions to notices (one while it runs). */
const subscribers = new Set<(notice: PeerNotice) => void>();
/** The live page needs no more than this many change events a second (see `changes`). */
const CHANGE_INTERVAL_MS = 10;
/** The HTTP thread's subscriptions to changes the live page shows. */
const watchers = new Set<(session: string) => void>();
let tasks: TaskBoard | null = null;
const harness = new Harness({
  root: first.layer.index.root,
  layer: first.layer,
  store: new SessionStore(data.harnessDir),
  depth: data.depth,
  onChange: (session) => watchers.forEach((tell) => tell(session)),
  onTurnEnd: (session) => void tasks?.turnEnded(session).catch((error: unknown) => log.warn(`task notice for ${session} failed: ${errorMessage(error)}`)),
});
tasks = new TaskBoard({ harness, notify: (notice) => subscribers.forEach((deliver) => deliver(notice)) });
const runtime = new Runtime({
  registry: buildRegistry(BUILTIN_CAPABILITIES),
  layer: first.layer,
  generation: first.generation,
  board: null,
  harness,
  tasks,
  url: () => null,
  faultCapability: data.faultCapability,
});
first = null;

let stopped: Promise<void> | null = null;
let endSubscriptions = (): void => {};
const stopping = new Promise<void>((resolve) => (endSubscriptions = resolve));
const control: RpcServed<HarnessControl> = {
  // The call's scope becomes its CallContext: a follow's lines go back as events, a cancel aborts it.
  invoke: (capabilityId, input, caller, depth, scope) =>
    runtime.outcome(capabilityId, input, caller, {
      onProgress: (line) => scope.emit(PROGRESS_STREAM, line),
      signal: scope.signal,
      ...(depth === null ? {} : { depth }),
    }),
  notices: (scope) =>
    new Promise<void>((resolve) => {
      const deliver = (notice: PeerNotice): void => scope.emit(NOTICE_STREAM, notice);
      subscribers.add(deliver);
      const end = (): void => {
        subscribers.delete(deliver);
        resolve();
      };
      if (scope.signal.aborted) end();
      else scope.signal.addEventListener('abort', end, { once: true });
      void stopping.then(end);
    }),
  recordUsage: async (record) => {
    tasks.recordUsage(record);
  },
  useSnapshot: async (snapshot, next) => {
    if (next <= generation) return;
    const fresh = snapshotView(decodeSnapshot(snapshot));
    generation = next;
    harness.useLayer(fresh);
    runtime.useGeneration(next, fresh);
  },
  pageState: () => pageHarnessState(harness, tasks),
  // At most one event per CHANGE_INTERVAL_MS (the first at once, the last never lost): an agent
  // printing thousands of lines a second costs the HTTP thread a hundred events, not thousands.
  changes: (scope) =>
    new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      let pending: string | null = null;
      const tell = (session: string): void => {
        if (timer !== null) {
          pending = session;
          return;
        }
        scope.emit(CHANGE_STREAM, session);
        const rearm = (): void => {
          timer = setTimeout(() => {
            timer = null;
            if (pending === null) return;
            const last = pending;
            pending = null;
            scope.emit(CHANGE_STREAM, last);
            rearm();
          }, CHANGE_INTERVAL_MS);
        };
        rearm();
      };
      watchers.add(tell);
      const end = (): void => {
        watchers.delete(tell);
        if (timer !== null) clearTimeout(timer);
        resolve();
      };
      if (scope.signal.aborted) end();
      else scope.signal.addEventListener('abort', end, { once: true });
      void stopping.then(end);
    }),
  stop() {
    stopped ??= (async () => {
      endSubscriptions();
      await harness.stop();
      setImmediate(() => {
        data.mainPort.close();
        data.httpPort.close();
      });
    })();
    return stopped;
  },
};
serveRpc<HarnessControl>(data.mainPort, control);
serveRpc<HarnessControl>(data.httpPort, control);

let started: HarnessStartMessage;
try {
  const adopted = await harness.adopt();
  if (adopted.adopted > 0) {
    log.info(`adopted ${adopted.adopted} agent sessions left by an earlier server (${adopted.lost} turns lost, ${adopted.killed} orphaned process groups killed)`);
  }
  started = { type: 'ready' };
} catch (error) {
  started = { type: 'failed', reason: `cannot read the harness's sessions in ${data.harnessDir}: ${errorMessage(error)}` };
}
parentPort?.postMessage(started);
