/**
 * The contract between the threads: the main thread (stdio, lease, peer board), the HTTP thread
 * (uWebSockets.js) and the pool tasks (piscina). Types only; every side imports it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { WireErrorCode } from '../errors.js';
import type { DiscoveryMode } from '../layer/types.js';
import type { PeerClient } from '../peers/board.js';
import type { UsageRecord } from '../tasks/usage.js';
import type { PageHarnessState, PageHostState, PageTopic } from '../page/state.js';

/**
 * What a capability call answers, on every path and across every thread boundary: the output as
 * JSON text (a string crosses a thread as one copy, REST sends it as it is, MCP embeds it as it
 * is), or a refusal (errors do not keep their class across threads).
 */
export type CallOutcome = { ok: true; json: string } | { ok: false; code: WireErrorCode; message: string };

/**
 * What a caller lends one capability call beside its input: where the call's progress goes (an
 * MCP `notifications/progress` for a caller that asked for it) and when to stop (the caller
 * cancelled or went away). Both are optional: most calls neither stream nor outlive their caller.
 * It holds functions, so it never crosses a thread as it is: the RPC carries progress as events and
 * the abort as a cancel message (src/threads/rpc.ts).
 */
export interface CallContext {
  /** One line of progress for the caller, in order; ignored once the call has ended. */
  onProgress?: (message: string) => void;
  /** Aborted when the caller cancels the call or goes away; a long handler stops when it fires. */
  signal?: AbortSignal;
  /** The caller's `MAJORDOMUS_SPAWN_DEPTH` (a bridge reports its own); absent: the server's. */
  depth?: number;
}

/** A pool task: run one capability over the snapshot. */
export interface PoolTask {
  capabilityId: string;
  input: unknown;
  caller: string | null;
}

/**
 * What the HTTP thread sends a pool thread: a batch of calls and the generation they run over. A
 * pool thread that holds another generation decodes this one's snapshot first (once per
 * generation), so no call of a new generation is answered from an old one.
 */
export interface PoolBatch {
  generation: number;
  snapshot: SharedArrayBuffer;
  tasks: PoolTask[];
}

export interface PoolWorkerData {
  snapshot: SharedArrayBuffer;
  /** The nice value the pool threads take (0: keep the default priority). */
  nice: number;
  /** `MAJORDOMUS_FAULT`'s capability, made to throw (tests). */
  faultCapability: string | null;
}

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
}

/** Startup messages the HTTP thread posts on its parentPort. */
export type HttpStartMessage =
  | { type: 'listening'; port: number; requestedPort: number }
  | { type: 'failed'; reason: string };

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

/** The RPC event stream on which `HostControl.invoke` reports a call's progress (each event a string). */
export const PROGRESS_STREAM = 'progress';

export const HOST_CONTROL_METHODS = ['invoke', 'join', 'leave', 'touch', 'instructions', 'pageState'] as const satisfies ReadonlyArray<keyof HostControl>;
export const HTTP_CONTROL_METHODS = ['setLeaseholder', 'setPeerCount', 'notifyPeer', 'stop', 'useSnapshot', 'changed'] as const satisfies ReadonlyArray<keyof HttpControl>;

/** Given to the harness thread at start. */
export interface HarnessWorkerData {
  snapshot: SharedArrayBuffer;
  /** `<local>/state/harness` of the checkout. */
  harnessDir: string;
  /** The server's own delegation depth. */
  depth: number;
  /** The main thread's channel (its own stdio client's calls). */
  mainPort: MessagePort;
  /** The HTTP thread's channel (every `/mcp` and REST caller). */
  httpPort: MessagePort;
  nice: number;
  faultCapability: string | null;
}

export type HarnessStartMessage = { type: 'ready' } | { type: 'failed'; reason: string };

/** What the harness thread offers the main and HTTP threads (src/threads/rpc.ts). */
export interface HarnessControl {
  /** Runs a harness capability; a follow's lines arrive as events of the call. */
  invoke(capabilityId: string, input: unknown, caller: string | null, depth: number | null): Promise<CallOutcome>;
  /** Stops every running agent's process group. */
  stop(): Promise<void>;
  /**
   * A subscription: each notice for a peer (a task asked or ended) arrives as an event of the
   * `notice` stream; the call ends when the thread stops or the caller cancels it.
   */
  notices(): Promise<void>;
  /** Counts one request the gateway forwarded (fire and forget). */
  recordUsage(record: UsageRecord): Promise<void>;
  /** Serves a new generation of the layer (the profiles and the policy agents are started from). */
  useSnapshot(snapshot: SharedArrayBuffer, generation: number): Promise<void>;
  /** The live page's harness part (sessions with transcript tails, executor tasks). */
  pageState(): Promise<PageHarnessState>;
  /**
   * A subscription like `notices`: each change the page shows (a session started, its transcript
   * grew, a turn ended, a session went) arrives as an event of the `page-change` stream (the
   * session id); the call ends when the thread stops or the caller cancels it.
   */
  changes(): Promise<void>;
}

/** The RPC event stream of `HarnessControl.changes` (each event a session id). */
export const CHANGE_STREAM = 'page-change';

/** The RPC event stream of `HarnessControl.notices` (each event a `PeerNotice`). */
export const NOTICE_STREAM = 'notice';

export const HARNESS_CONTROL_METHODS = ['invoke', 'stop', 'notices', 'recordUsage', 'useSnapshot', 'pageState', 'changes'] as const satisfies ReadonlyArray<keyof HarnessControl>;

/** Given to the layer build worker at start (workers/layer-build.ts). */
export interface LayerBuildWorkerData {
  /** The serving generation's snapshot (the worker merges every build over it). */
  snapshot: SharedArrayBuffer;
  discovery: DiscoveryMode;
  /**
   * The local half the server writes to (relative to the root), when the caller knows it; else the
   * worker reads it from the manifest, with the repo half.
   */
  localPath: string | null;
  /** Debounce of a burst of changes (src/layer/rebuild-scheduler.ts). */
  quietMs: number;
  maxWaitMs: number;
  nice: number;
}

/** What the layer build worker posts to the main thread. */
export type LayerBuildMessage =
  | { type: 'watching'; directories: number }
  | {
      type: 'generation';
      generation: number;
      snapshot: SharedArrayBuffer;
      /** URIs that appeared, vanished or changed. */
      changed: string[];
      /** Why the build failed as a whole (the last good objects are served), or null. */
      failed: string | null;
      objects: number;
      diagnostics: number;
      ms: number;
    }
  | { type: 'unchanged'; ms: number }
  /** A build that threw (the serving generation stays). */
  | { type: 'error'; reason: string };
