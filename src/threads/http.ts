/**
 * The contract between the main thread and the HTTP thread (workers/http-thread.ts): what the HTTP
 * thread is started with and the two control surfaces each side serves over src/platform/rpc.ts.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CallOutcome } from '../platform/call.js';
import type { LocalErrorCode } from '../platform/errors.js';
import type { HttpEngine } from '../platform/settings.js';
import type { PeerClient } from '../peers/board.js';
import type { PageHostState, PageTopic } from '../page/state.js';

/** Given to the HTTP thread at start. */
export interface HttpWorkerData {
  snapshot: SharedArrayBuffer;
  host: string;
  port: number;
  /** Try a free port when `port` is taken (the shared server does; an explicit `serve --port` too). */
  fallbackToFreePort: boolean;
  leaseholder: boolean;
  /** The bearer token every protected request must carry (the lease's). */
  token: string;
  /** Real path of the checkout's root. */
  root: string;
  /** The manifest's validated `local.path` (relative to the root, `/` separators): the gateway reads `<local>/executor.yaml`. */
  localPath: string;
  /** The endpoint on which the main thread serves `HostControl`. */
  hostPort: MessagePort;
  /** The endpoint on which the HTTP thread serves `HttpControl`. */
  controlPort: MessagePort;
  /** Its channel to the harness thread (the shared server has one; `serve` and bridges' servers alike). */
  harnessPort: MessagePort | null;
  /** Absolute path of the pool task module. */
  poolTaskFile: string;
  poolThreads: number;
  idleSessionMs: number;
  maxSessions: number;
  /** Remember answers of pure queries (src/http/answer-cache.ts). */
  answerCache: boolean;
  nice: number;
  faultCapability: string | null;
  /** `MAJORDOMUS_HTTP_ENGINE`: the engine forced, or null for uWS where it loads, else node:http. */
  engine: HttpEngine | null;
}

/** Startup messages the HTTP thread posts on its parentPort. */
export type HttpStartMessage =
  | {
      type: 'listening';
      port: number;
      requestedPort: number;
      engine: HttpEngine;
      /** Why uWS does not serve, when node:http serves in its place without being asked to. */
      fallback: string | null;
    }
  /** `code`: what the command line reports (default MAJ_PORT_UNAVAILABLE). */
  | { type: 'failed'; reason: string; code?: LocalErrorCode };

/** What the main thread offers the HTTP thread (src/threads/rpc.ts). */
export interface HostControl {
  /**
   * Runs a capability in the main thread. Called with `callWith` when the caller lends a
   * `CallContext`: progress comes back as events of the stream `progress` (each a string), and
   * cancelling the call aborts the handler's signal.
   */
  invoke(capabilityId: string, input: unknown, caller: string | null): Promise<CallOutcome>;
  /**
   * Answers the peer count too (the HTTP thread's copy is current when `initialize` answers) and
   * the new peer's instructions (one trip to the main thread per `initialize`).
   */
  join(client: PeerClient, preferredPeerId: string | null, clientPids: readonly number[]): Promise<{ peerId: string; peers: number; instructions: string }>;
  leave(peerId: string): Promise<number>;
  touch(peerId: string): Promise<void>;
  instructions(peerId: string): Promise<string>;
  /** The live page's main-thread part (peers, claims, conflicts, messages, layer). */
  pageState(): Promise<PageHostState>;
}

/** What the HTTP thread offers the main thread (src/threads/rpc.ts). */
export interface HttpControl {
  setLeaseholder(leaseholder: boolean): Promise<void>;
  setPeerCount(count: number): Promise<void>;
  /** Sends a notification to a peer's `/mcp` sessions (their GET streams); whether any took it. */
  notifyPeer(peerId: string, method: string, params: Record<string, unknown>, requires: string | null): Promise<boolean>;
  /** Closes the listen socket and every connection, ends the open sessions and the pool. */
  stop(): Promise<void>;
  /**
   * Serves a new generation of the layer: the `/mcp` sessions, REST and the pool answer from it,
   * the answer cache of the old one is dropped, and the `/mcp` sessions are told what changed.
   */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): Promise<void>;
  /** Something the live page shows changed in the main thread: open pages get it again. */
  changed(topic: PageTopic): Promise<void>;
}

export const HOST_CONTROL_METHODS = ['invoke', 'join', 'leave', 'touch', 'instructions', 'pageState'] as const satisfies ReadonlyArray<keyof HostControl>;
export const HTTP_CONTROL_METHODS = ['setLeaseholder', 'setPeerCount', 'notifyPeer', 'stop', 'useSnapshot', 'changed'] as const satisfies ReadonlyArray<keyof HttpControl>;
