/**
 * The HTTP thread's side of the pool: piscina starts and owns the pool threads, and each one is
 * handed a `MessagePort` of its own by one long task (`attachPoolChannel`, src/threads/pool.ts).
 * Batches of calls cross that port as JSON text and come back as `CallOutcome`s, so a batch costs
 * one message each way and no piscina task: with a task per batch the HTTP thread spent about
 * four times the CPU per call on piscina's bookkeeping, its `Atomics.notify` and a structured
 * clone of the snapshot's handle (docs/PERFORMANCE.md, "The pool path").
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { CallOutcome } from '../platform/call.js';
import { errorMessage } from '../platform/errors.js';
import type { PoolAttach, PoolCall, PoolInbound, PoolOutbound, PoolWorkerData } from '../threads/pool.js';

export interface PoolChannelsOptions {
  /** Absolute path of the pool task module (workers/pool-task.js). */
  taskFile: string;
  threads: number;
  workerData: PoolWorkerData;
  /** The generation of `workerData.snapshot`. */
  generation: number;
}

/** How long a stop waits for pool threads still loading their module. */
const SETTLE_MS = 10_000;

interface Batch {
  size: number;
  resolve: (outcomes: CallOutcome[]) => void;
}

interface Channel {
  readonly port: MessagePort;
  readonly batches: Map<number, Batch>;
  /** Calls sent and not yet answered: the next batch goes to the channel with the fewest. */
  outstanding: number;
  /** Resolves once the thread serves (its module loaded). */
  readonly ready: Promise<void>;
}

export class PoolChannels {
  readonly #piscina: Piscina<PoolAttach, void>;
  readonly #channels = new Set<Channel>();
  readonly #firstGeneration: number;
  #serving: { generation: number; snapshot: SharedArrayBuffer };
  #nextBatch = 1;
  #stopped: Promise<void> | null = null;

  constructor(options: PoolChannelsOptions) {
    this.#firstGeneration = options.generation;
    this.#serving = { generation: options.generation, snapshot: options.workerData.snapshot };
    this.#piscina = new Piscina<PoolAttach, void>({
      filename: options.taskFile,
      name: 'attachPoolChannel',
      workerData: options.workerData,
      minThreads: options.threads,
      maxThreads: options.threads,
      // One attach task per thread: a second must wait for a thread of its own.
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
    for (let i = 0; i < options.threads; i++) this.#attach();
  }

  /** Runs a batch of calls on the least busy thread; answers in order, never rejects. */
  run(calls: readonly PoolCall[]): Promise<CallOutcome[]> {
    const channel = this.#leastBusy();
    if (this.#stopped !== null || channel === null) return Promise.resolve(calls.map(() => unavailable('the capability pool has stopped')));
    const id = this.#nextBatch++;
    channel.outstanding += calls.length;
    return new Promise((resolve) => {
      channel.batches.set(id, { size: calls.length, resolve });
      post(channel.port, { type: 'batch', id, generation: this.#serving.generation, calls: JSON.stringify(calls) });
    });
  }

  /** Every thread answers from this generation from its next batch on (a port keeps its order). */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): void {
    this.#serving = { generation, snapshot };
    for (const channel of this.#channels) post(channel.port, { type: 'snapshot', generation, snapshot });
  }

  /** Closes every channel and ends the threads. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      // A pool thread destroyed while it still loads its module aborts the whole process (node
      // fails inside the module loader): a server stopped right after it started waits for its
      // threads to serve (bounded) before they go.
      const ready = Promise.allSettled([...this.#channels].map((c) => c.ready));
      await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, SETTLE_MS).unref())]);
      for (const channel of [...this.#channels]) this.#close(channel, 'the server is shutting down');
      await this.#piscina.destroy();
    })();
    return this.#stopped;
  }

  #attach(): void {
    const { port1, port2 } = new MessageChannel();
    let ready!: () => void;
    const channel: Channel = { port: port1, batches: new Map(), outstanding: 0, ready: new Promise((resolve) => (ready = resolve)) };
    port1.on('message', (message: PoolOutbound) => {
      if (message.type === 'ready') return ready();
      const batch = channel.batches.get(message.id);
      if (batch === undefined) return;
      channel.batches.delete(message.id);
      channel.outstanding -= batch.size;
      batch.resolve(message.outcomes.length === batch.size ? message.outcomes : fill(batch.size, message.outcomes[0]));
    });
    this.#channels.add(channel);
    // A thread started after a swap decodes the first generation from its start data: it gets
    // the serving one before any batch.
    if (this.#serving.generation !== this.#firstGeneration) post(port1, { type: 'snapshot', ...this.#serving });
    this.#piscina.run({ port: port2 }, { transferList: [port2] }).then(
      () => this.#lost(channel, 'a pool thread stopped serving'),
      (error: unknown) => this.#lost(channel, `a pool thread failed: ${errorMessage(error)}`),
    );
  }

  /** A thread that ended on its own: its calls fail, and a new thread takes its place. */
  #lost(channel: Channel, why: string): void {
    if (!this.#channels.has(channel)) return;
    this.#close(channel, why);
    if (this.#stopped === null) this.#attach();
  }

  #close(channel: Channel, why: string): void {
    this.#channels.delete(channel);
    channel.port.close();
    for (const batch of channel.batches.values()) batch.resolve(fill(batch.size, unavailable(why)));
    channel.batches.clear();
  }

  #leastBusy(): Channel | null {
    let best: Channel | null = null;
    for (const channel of this.#channels) if (best === null || channel.outstanding < best.outstanding) best = channel;
    return best;
  }
}

function post(port: MessagePort, message: PoolInbound): void {
  port.postMessage(message);
}

function unavailable(why: string): CallOutcome {
  return { ok: false, code: 'internal', message: why };
}

/** A batch answered with one failure for all (the pool thread could not read it): every call gets it. */
function fill(size: number, outcome: CallOutcome | undefined): CallOutcome[] {
  return Array.from({ length: size }, () => outcome ?? unavailable('a batch was answered with the wrong number of outcomes'));
}
