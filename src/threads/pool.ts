/**
 * The contract between the HTTP thread and the pool threads (piscina, workers/pool-task.ts). Types only.
 *
 * piscina starts, owns and ends the pool threads; the calls do not travel as piscina tasks. Each
 * pool thread runs one long task, `attachPoolChannel`, that hands it a `MessagePort` of its own,
 * and the calls and answers cross that port: a batch of calls as one JSON text, its answers as
 * `CallOutcome`s (the output already JSON text). A piscina task per batch cost the HTTP thread
 * about four times as much CPU per call (its task bookkeeping, an `Atomics.notify` and a
 * structured clone of the batch and the snapshot's handle each time; docs/PERFORMANCE.md).
 */
import type { MessagePort } from 'node:worker_threads';
import type { CallOutcome } from '../platform/call.js';

/** One call of a batch: `[capabilityId, input, caller]`. */
export type PoolCall = [capabilityId: string, input: unknown, caller: string | null];

/**
 * What the HTTP thread posts on a pool thread's channel, in order: a generation's snapshot before
 * the first batch that names it (a port keeps its order, so no call of a new generation is
 * answered from an old one), and batches of calls.
 */
export type PoolInbound =
  | { type: 'snapshot'; generation: number; snapshot: SharedArrayBuffer }
  /** `calls` is the JSON text of a `PoolCall[]`. */
  | { type: 'batch'; id: number; generation: number; calls: string };

/** What a pool thread posts back: that it is serving (its module loaded), and each batch's answers in order. */
export type PoolOutbound = { type: 'ready' } | { type: 'answers'; id: number; outcomes: CallOutcome[] };

/** The one piscina task a pool thread runs: it serves `port` until the HTTP thread closes it. */
export interface PoolAttach {
  port: MessagePort;
}

export interface PoolWorkerData {
  /** The generation a pool thread decodes at its start (later ones come over its channel). */
  snapshot: SharedArrayBuffer;
  /** The nice value the pool threads take (0: keep the default priority). */
  nice: number;
  /** `MAJORDOMUS_FAULT`'s capability, made to throw (tests). */
  faultCapability: string | null;
}
