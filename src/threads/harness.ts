/**
 * The contract of the harness thread (workers/harness-thread.ts), which owns the checkout's session
 * table: what it is started with and what it serves to the main and the HTTP thread.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CallOutcome } from '../platform/call.js';
import type { UsageRecord } from '../tasks/usage.js';
import type { PageHarnessState } from '../page/state.js';
import type { HarnessNews } from '../harness/table.js';

export type { HarnessNews } from '../harness/table.js';

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
  /** Between SIGTERM and SIGKILL when a turn is stopped (settings().killGraceMs). */
  killGraceMs: number;
}

export type HarnessStartMessage = { type: 'ready' } | { type: 'failed'; reason: string };

/** What the harness thread offers the main and HTTP threads (src/threads/rpc.ts). */
export interface HarnessControl {
  /**
   * Runs a harness capability; a follow's lines arrive as events of the call (`progress`), and,
   * when `task` (the caller asked for an MCP task), the task's id as a `task` event.
   */
  invoke(capabilityId: string, input: unknown, caller: string | null, depth: number | null, task: boolean): Promise<CallOutcome>;
  /** Stops every running agent's process group. */
  stop(): Promise<void>;
  /**
   * A subscription: each notice for a peer (a task asked or ended) arrives as an event of the
   * `notice` stream; the call ends when the thread stops or the caller cancels it.
   */
  notices(): Promise<void>;
  /**
   * Counts requests the gateway forwarded (fire and forget): those that ended in one turn of the
   * HTTP thread's loop come together, one message for many streams.
   */
  recordUsage(records: UsageRecord[]): Promise<void>;
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
  /**
   * A subscription like `notices`: what each turn's start or end and each session's going means to
   * the readers of sessions (`HarnessNews`: resource URIs, ended tasks) arrives as an event of the
   * `harness-news` stream; the call ends when the thread stops or the caller cancels it.
   */
  news(): Promise<void>;
  /** The depth of the running agent whose process chain `pids` is (a client's), or null: see `Harness.agentDepthOf`. */
  agentDepth(pids: number[]): Promise<number | null>;
}

/** The RPC event stream of `HarnessControl.news` (each event a `HarnessNews`). */
export const NEWS_STREAM = 'harness-news';

/** The RPC event stream of `HarnessControl.changes` (each event a session id). */
export const CHANGE_STREAM = 'page-change';

/** The RPC event stream of `HarnessControl.notices` (each event a `PeerNotice`). */
export const NOTICE_STREAM = 'notice';

export const HARNESS_CONTROL_METHODS = ['invoke', 'stop', 'notices', 'recordUsage', 'useSnapshot', 'pageState', 'changes', 'news', 'agentDepth'] as const satisfies ReadonlyArray<keyof HarnessControl>;
