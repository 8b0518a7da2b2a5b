/**
 * The contract between the threads: the main thread (stdio, lease, peer board), the HTTP thread
 * (uWebSockets.js) and the pool tasks (piscina). Types only; both sides import it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { PeerClient } from '../src/peers/board.js';
import type { WireErrorCode } from '../src/errors.js';

/**
 * What a capability call answers across a thread boundary: the output as JSON text (a string
 * crosses a thread as one copy, where a deep object is cloned node by node, and REST sends it as
 * it is), or a refusal (errors do not keep their class across threads).
 */
export type CallOutcome = { ok: true; json: string } | { ok: false; code: WireErrorCode; message: string };

/** A pool task: run one capability over the snapshot. */
export interface PoolTask {
  capabilityId: string;
  input: unknown;
  caller: string | null;
}

export interface PoolWorkerData {
  snapshot: SharedArrayBuffer;
}

/** Given to the HTTP thread at start. */
export interface HttpWorkerData {
  snapshot: SharedArrayBuffer;
  host: string;
  port: number;
  /** Try a free port when `port` is taken (the shared server does; an explicit `serve --port` too). */
  fallbackToFreePort: boolean;
  poolThreads: number;
  leaseholder: boolean;
  /** Comlink endpoint on which the main thread exposes `HostControl`. */
  hostPort: MessagePort;
  /** Comlink endpoint on which the HTTP thread exposes `HttpControl`. */
  controlPort: MessagePort;
  /** Absolute path of the pool task module. */
  poolTaskFile: string;
  idleSessionMs: number;
  /** Remember answers of pure queries (src/http/answer-cache.ts). */
  answerCache: boolean;
}

/** Startup messages the HTTP thread posts on its parentPort. */
export type HttpStartMessage =
  | { type: 'listening'; port: number; requestedPort: number }
  | { type: 'failed'; reason: string };

/** What the main thread offers the HTTP thread (exposed over comlink). */
export interface HostControl {
  /** Runs a capability that reads the peer board. */
  invoke(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome>;
  /** Answers the peer count too, so the HTTP thread's copy is current when `initialize` answers. */
  join(client: PeerClient, preferredPeerId?: string): Promise<{ peerId: string; peers: number }>;
  leave(peerId: string): Promise<number>;
  touch(peerId: string): Promise<void>;
  instructions(peerId: string): Promise<string>;
}

/** What the HTTP thread offers the main thread (exposed over comlink). */
export interface HttpControl {
  setLeaseholder(leaseholder: boolean): Promise<void>;
  setPeerCount(count: number): Promise<void>;
  /** Closes the listen socket and every connection, ends the open sessions and the pool. */
  stop(): Promise<void>;
}
