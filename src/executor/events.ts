/**
 * The events `majordomus exec --json` prints, one JSON object a line on stdout (the harness parses
 * them: src/harness/vendors/executor.ts). Nothing else is written to stdout.
 */
import type { Failover } from './chat.js';
import type { Usage } from './messages.js';

/**
 * How a turn ended, honestly (EXECUTOR.md): the one list every reader of the executor's events
 * uses (the harness's adapter, the task board). Only the settled states are successes.
 */
export const TURN_STATES = ['completed', 'waiting', 'max_turns', 'loop', 'error', 'cancelled'] as const;
export type TurnStatus = (typeof TURN_STATES)[number];

/** The states in which a turn did what was asked: it answered, or it asked a question. */
export const SETTLED_STATES: readonly TurnStatus[] = ['completed', 'waiting'];

export interface SessionEvent {
  type: 'session';
  /** The conversation id a later turn resumes with `--resume`. */
  id: string;
}

export interface MessageEvent {
  type: 'message';
  role: 'assistant' | 'user';
  text: string;
}

export interface ToolCallEvent {
  type: 'tool_call';
  /** The call's id (its result carries the same). */
  id: string;
  name: string;
  /** The parsed arguments; the raw text when the model wrote no valid JSON. */
  input: unknown;
}

export interface ToolResultEvent {
  type: 'tool_result';
  id: string;
  name: string;
  ok: boolean;
  /** What the model was sent (capped). */
  output: string;
  /** Why the permission floor or the policy refused, when it did. */
  refused?: string;
}

/** The gateway failed over before answering (printed only when it did). */
export interface RouteEvent {
  type: 'route';
  provider: string;
  model: string;
  failovers: Failover[];
}

/** The conversation was compacted before a request. */
export interface CompactionEvent {
  type: 'compaction';
  snipped: number;
  summarised: number;
  tokens_before: number;
  tokens_after: number;
}

export interface ResultEvent {
  type: 'result';
  status: TurnStatus;
  answer?: string;
  question?: string;
  options?: string[];
  error?: string;
  /** Summed over this turn's requests, exactly as the server reported them. */
  usage: Usage;
  /** Model requests answered this turn. */
  requests: number;
}

export type ExecutorEvent = SessionEvent | MessageEvent | ToolCallEvent | ToolResultEvent | RouteEvent | CompactionEvent | ResultEvent;

/** Where events go. */
export type EmitEvent = (event: ExecutorEvent) => void;

/** Prints events to stdout, one a line; a second `result` is dropped (a turn has exactly one). */
export function stdoutEvents(write: (line: string) => void = writeStdout): EmitEvent & { resulted(): boolean } {
  let resulted = false;
  const emit = (event: ExecutorEvent): void => {
    if (event.type === 'result') {
      if (resulted) return;
      resulted = true;
    }
    write(`${JSON.stringify(event)}\n`);
  };
  return Object.assign(emit, { resulted: () => resulted });
}

function writeStdout(line: string): void {
  process.stdout.write(line); // -- stdout-ok: the events are the command's output
}
