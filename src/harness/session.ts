/**
 * What the session table holds: a session (its breadcrumb record, what its latest turn was started
 * with) and its turns in memory, and the view of them the task board reads. A turn object is the
 * identity everything its process sends is attributed by, so a late exit never ends the wrong turn.
 */
import type { LaunchAnswer } from './schemas.js';
import type { LaunchRecord, SessionRecord, TurnDone, TurnStatus } from './store.js';
import type { AgentName } from './types.js';
import type { TurnParser } from './vendors/adapter.js';

/** The stderr a read shows: its last characters (a running turn keeps that much in memory). */
export const STDERR_TAIL = 2_000;

export interface Turn {
  turn: number;
  status: TurnStatus;
  startedAt: string;
  done: TurnDone | null;
  /** Wakes followers: a line was written, or the turn ended. */
  readonly listeners: Set<() => void>;
  pid: number | null;
  pgid: number | null;
  parser: TurnParser | null;
  /** Set when we stop the turn: how it is to be recorded. */
  stopping: 'killed' | 'steered' | null;
  ended: Promise<void>;
  stderrTail: string;
  promptBytes: number;
  /** How a send started it (a spawn's first turn, and a turn adopted from disk, say nothing). */
  delivery: 'resumed' | 'steered' | null;
  /** What spawn or send answers for it once it ended, kept: a finished task's result never changes. */
  finalAnswer: LaunchAnswer | null;
  /** The depth stamped on its agent; null for a turn adopted from disk (it runs nothing). */
  agentDepth: number | null;
}

export interface Session {
  record: SessionRecord;
  /** Never empty once the session is in the table: every reader takes the latest turn for granted. */
  turns: Turn[];
  /** A send (or a steer) of this session is starting its turn. */
  launching: 'send' | 'steer' | null;
  argv: string[];
  envNames: string[];
}

/** A session's turns as the task board reads them (src/tasks/). */
export interface SessionTurns {
  session: string;
  profile: string;
  agent: AgentName;
  /** Who spawned it (a peer id), when a peer did. */
  spawnedBy: string | null;
  turns: Array<{ turn: number; status: TurnStatus; done: TurnDone | null; transcript: string }>;
  /** A turn (a send or a steer) is being started. */
  launching: boolean;
}

/** The latest turn of a session in the table (it has one, see `Session.turns`). */
export function latestTurn(entry: Session): Turn {
  return entry.turns.at(-1) as Turn;
}

/** A turn that ended before this table knew it (adopted from disk): readable, never running. */
export function endedTurn(done: TurnDone): Turn {
  return {
    turn: done.turn,
    status: done.status,
    startedAt: done.startedAt,
    done,
    listeners: new Set(),
    pid: null,
    pgid: null,
    parser: null,
    stopping: null,
    ended: Promise.resolve(),
    stderrTail: '',
    promptBytes: 0,
    delivery: null,
    finalAnswer: null,
    agentDepth: null,
  };
}

/** The launch settings that are set, in the order a caller sees them (an unset one is left out, not `undefined`). */
export function launchSettings(values: Pick<LaunchRecord, 'model' | 'effort' | 'mode'>): Pick<LaunchRecord, 'model' | 'effort' | 'mode'> {
  return {
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.effort === undefined ? {} : { effort: values.effort }),
    ...(values.mode === undefined ? {} : { mode: values.mode }),
  };
}
