/**
 * A turn seen as an MCP task (protocol 2025-11-25). A task names one turn, `<session>:<turn>`,
 * never the session: the spec makes a finished task's state final, while a session runs turn
 * after turn. Its status is the turn's real state — running is `working`, an ended turn is
 * `completed` whatever its answer says (the result says it, as the synchronous call's does), a
 * killed or steered one `cancelled`, a lost one `failed` — and cancelling it stops that turn
 * only: a session is never reaped for a task.
 */
import type { Session, Turn } from './session.js';
import { SESSION_ID, type TurnStatus } from './store.js';
import { HarnessRefusal } from './types.js';

/** The MCP task states (2025-11-25) a turn can be in. */
export type TurnTaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** What a task's state is answered with (the projection adds what MCP asks beside it). */
export interface TurnTaskState {
  taskId: string;
  status: TurnTaskStatus;
  /** The turn and its outcome: `turn 2 running`, `turn 2 exited 0`, `turn 2 killed`. */
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
}

export function turnTaskId(session: string, turn: number): string {
  return `${session}:${turn}`;
}

/** The session and turn a task id names; refused (`not_found`) when it names none. */
export function parseTurnTaskId(taskId: string): { session: string; turn: number } {
  const colon = taskId.lastIndexOf(':');
  const session = taskId.slice(0, colon);
  const turn = Number(taskId.slice(colon + 1));
  if (colon < 0 || !SESSION_ID.test(session) || !Number.isSafeInteger(turn) || turn < 1) {
    throw new HarnessRefusal(`no task ${JSON.stringify(taskId)}: a task id is <session>:<turn>, as the task was created`, 'not_found');
  }
  return { session, turn };
}

const STATUS_OF: Readonly<Record<TurnStatus, TurnTaskStatus>> = {
  running: 'working',
  exited: 'completed',
  killed: 'cancelled',
  steered: 'cancelled',
  lost: 'failed',
};

export function isTerminal(status: TurnTaskStatus): boolean {
  return status !== 'working';
}

/** The turn's state as its task's. */
export function turnTaskState(entry: Session, turn: Turn): TurnTaskState {
  const done = turn.done;
  const outcome =
    turn.status === 'running'
      ? 'running'
      : turn.status === 'exited'
        ? `exited ${done?.exitCode ?? `by signal ${done?.signal ?? 'unknown'}`}`
        : turn.status === 'lost'
          ? 'lost: the server running it stopped'
          : turn.status;
  return {
    taskId: turnTaskId(entry.record.session, turn.turn),
    status: STATUS_OF[turn.status],
    statusMessage: `turn ${turn.turn} ${outcome}`,
    createdAt: turn.startedAt,
    lastUpdatedAt: done?.endedAt ?? turn.startedAt,
  };
}

/** The turn a task names, in `entry`; refused (`not_found`) when the session never reached it. */
export function taskTurn(entry: Session, turn: number): Turn {
  const found = entry.turns.find((t) => t.turn === turn);
  if (found === undefined) throw new HarnessRefusal(`no task ${turnTaskId(entry.record.session, turn)}: the session has turns 1 to ${entry.turns.length}`, 'not_found');
  return found;
}

/** Resolves once `turn` has ended, the deadline passes or `signal` aborts, whichever comes first. */
export async function untilTurnEnds(turn: Turn, deadline: number, signal?: AbortSignal): Promise<void> {
  if (turn.status !== 'running' || signal?.aborted) return;
  let wake: () => void = () => undefined;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  // A listener is woken by every line; only the end matters here.
  const onLine = (): void => {
    if (turn.status !== 'running') wake();
  };
  turn.listeners.add(onLine);
  signal?.addEventListener('abort', wake, { once: true });
  const timer = setTimeout(wake, Math.max(0, deadline - Date.now()));
  try {
    await woken;
  } finally {
    clearTimeout(timer);
    turn.listeners.delete(onLine);
    signal?.removeEventListener('abort', wake);
  }
}
