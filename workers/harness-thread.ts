/**
 * The harness thread: the one place of a shared server that owns the checkout's session table.
 * Agent processes, their pipes and the parsing of their event streams live here, off the owner's
 * stdio path (invariant 3). The main thread (its own stdio client) and the HTTP thread (every
 * `/mcp` and REST caller) each reach it over their own port; a follow's lines travel back as
 * events of the call.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../src/errors.js';
import { SessionStore } from '../src/harness/store.js';
import { Harness } from '../src/harness/table.js';
import { createLayerView } from '../src/layer/view.js';
import { log } from '../src/log.js';
import { BUILTIN_CAPABILITIES } from '../src/registry/builtins.js';
import { buildRegistry } from '../src/registry/registry.js';
import { Runtime } from '../src/runtime/runtime.js';
import { serveRpc, type RpcServed } from '../src/threads/rpc.js';
import { decodeSnapshot } from '../src/threads/snapshot.js';
import { PROGRESS_STREAM, type HarnessControl, type HarnessStartMessage, type HarnessWorkerData } from '../src/threads/types.js';
import { yieldToMainThread } from './priority.js';

const data = workerData as HarnessWorkerData;
// Agents inherit this thread's priority: they yield the CPU to the owner's own client too.
yieldToMainThread(data.nice);

const content = decodeSnapshot(data.snapshot);
const layer = createLayerView(content.index);
const harness = new Harness({ root: content.index.root, layer, store: new SessionStore(data.harnessDir), depth: data.depth });
const runtime = new Runtime({
  registry: buildRegistry(BUILTIN_CAPABILITIES),
  layer,
  board: null,
  harness,
  url: () => null,
  faultCapability: data.faultCapability,
});

let stopped: Promise<void> | null = null;
const control: RpcServed<HarnessControl> = {
  // The call's scope becomes its CallContext: a follow's lines go back as events, a cancel aborts it.
  invoke: (capabilityId, input, caller, depth, scope) =>
    runtime.outcome(capabilityId, input, caller, {
      onProgress: (line) => scope.emit(PROGRESS_STREAM, line),
      signal: scope.signal,
      ...(depth === null ? {} : { depth }),
    }),
  stop() {
    stopped ??= (async () => {
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
