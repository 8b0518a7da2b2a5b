/**
 * What every capability call is given and answers, whatever thread runs it: the answer as JSON
 * text or a refusal (a `CallOutcome` crosses threads as it is), and what the caller lends the call
 * (progress, cancellation, its delegation depth).
 */
import type { WireErrorCode } from './errors.js';

/**
 * What a capability call answers, on every path and across every thread boundary: the output as
 * JSON text (a string crosses a thread as one copy, REST sends it as it is, MCP embeds it as it
 * is), or a refusal (errors do not keep their class across threads) with, for one that passes,
 * when to try again.
 */
export type CallOutcome = { ok: true; json: string } | { ok: false; code: WireErrorCode; message: string; retryAfterMs?: number };

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
  /**
   * Set when the caller asked for a task (MCP): the call answers as soon as its work has started,
   * whatever it was asked to wait for, and names the task here before it answers.
   */
  onTask?: (taskId: string) => void;
}

/** The RPC event stream on which a call crossing a thread reports its progress (each event a string). */
export const PROGRESS_STREAM = 'progress';

/** The RPC event stream on which a call crossing a thread names the task it started (one string). */
export const TASK_STREAM = 'task';
