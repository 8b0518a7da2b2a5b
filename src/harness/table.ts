/**
 * The harness as the rest of the product sees it: one `Harness` per checkout, in the shared
 * server's harness thread; every peer's harness call reaches it, so every peer sees the same
 * sessions. It owns the session table and hands it to the part each call needs — the table itself
 * (session-table.ts), starting a turn (launching.ts, turn.ts), reading and following
 * (answers.ts, follow.ts), adoption at start (adopt.ts), the profile list (profile-list.ts).
 */
import type { LayerView } from '../layer/view.js';
import type { CallContext } from '../platform/call.js';
import { adoptSessions, type Adoption } from './adopt.js';
import { launchAnswer, readSession, sessionResource, type ReadInput, type ResourcePart } from './answers.js';
import { sendTurn, spawnSession, type SendInput, type SpawnInput } from './launching.js';
import { listProfiles } from './profile-list.js';
import type { KillAnswer, LaunchAnswer, ProfileList, ReadAnswer, ResourceAnswer, SendAnswer, SessionList, SessionStatus } from './schemas.js';
import type { Session, SessionTurns } from './session.js';
import { SessionTable, type HarnessOptions } from './session-table.js';
import { stopTurn } from './turn.js';
import { taskTurn, turnTaskId, turnTaskState, untilTurnEnds, type TurnTaskState } from './turn-task.js';
import { HarnessRefusal } from './types.js';

export { READ_CAP_BYTES } from './follow.js';
export type { LaunchInput, SendInput, SpawnInput } from './launching.js';
export type { SessionTurns } from './session.js';
export type { HarnessNews, HarnessOptions } from './session-table.js';
export type { TurnTaskState } from './turn-task.js';
export type { AgentName } from './types.js';

/** What the harness capabilities may do with the table. */
export type HarnessAccess = Pick<
  Harness,
  'listProfiles' | 'spawn' | 'send' | 'list' | 'status' | 'read' | 'kill' | 'resource' | 'turnsOf' | 'sessionDir' | 'turnTask' | 'untilTurnEnds' | 'turnAnswer' | 'stopTurn'
>;

export class Harness {
  readonly #table: SessionTable;

  constructor(options: HarnessOptions) {
    this.#table = new SessionTable(options);
  }

  /**
   * A new generation of the layer serves: profiles and the policy are read from it from now on
   * (sessions already running keep what they were started with).
   */
  useLayer(layer: LayerView): void {
    this.#table.useLayer(layer);
  }

  /**
   * Adopts what earlier servers left: finished turns stay readable; a turn whose owner died is
   * `lost` and its process group, verified by pid, group and start time, is killed. Sessions of a
   * live owner are never touched.
   */
  adopt(): Promise<Adoption> {
    return adoptSessions(this.#table);
  }

  /** The nominated profiles a caller may start, with why one cannot start yet. */
  listProfiles(): ProfileList {
    return listProfiles(this.#table);
  }

  /**
   * A new session of a nominated profile (`spawnedBy`: the peer that asked, if one did). A caller
   * that asked for a task (`call.onTask`) is answered once the turn runs, whatever `wait` says,
   * and told the turn's task id first.
   */
  async spawn(input: SpawnInput, call: CallContext = {}, spawnedBy: string | null = null): Promise<LaunchAnswer> {
    const asked = call.onTask ? { ...input, wait: false } : input;
    const { entry, turn } = await spawnSession(this.#table, asked, call, spawnedBy);
    call.onTask?.(turnTaskId(entry.record.session, turn.turn));
    return launchAnswer(this.#table, entry, turn, asked, call);
  }

  /** The session's next turn: resumed, or steered when `steer` and a turn runs; a task as spawn's. */
  async send(input: SendInput, call: CallContext = {}): Promise<SendAnswer> {
    const asked = call.onTask ? { ...input, wait: false } : input;
    const { entry, turn, delivery } = await sendTurn(this.#table, asked, call);
    call.onTask?.(turnTaskId(entry.record.session, turn.turn));
    return { ...(await launchAnswer(this.#table, entry, turn, asked, call)), delivery };
  }

  /** The state of the turn a task names, as its task's. */
  turnTask(input: { session: string; turn: number }): TurnTaskState {
    const entry = this.#taskSession(input.session);
    return turnTaskState(entry, taskTurn(entry, input.turn));
  }

  /** Resolves once the turn has ended, `deadline` (epoch ms) passed or `signal` aborted. */
  untilTurnEnds(input: { session: string; turn: number }, deadline: number, signal?: AbortSignal): Promise<void> {
    const entry = this.#taskSession(input.session);
    return untilTurnEnds(taskTurn(entry, input.turn), deadline, signal);
  }

  /**
   * What spawn (or, `asSend`, session_send) answers for an ended turn, read once and kept: a
   * finished task's result is the same bytes however far the session moved on.
   */
  async turnAnswer(input: { session: string; turn: number }, asSend: boolean): Promise<LaunchAnswer | SendAnswer> {
    const entry = this.#taskSession(input.session);
    const turn = taskTurn(entry, input.turn);
    if (turn.status === 'running') throw new HarnessRefusal(`turn ${turn.turn} of session ${input.session} is still running`);
    turn.finalAnswer ??= await launchAnswer(this.#table, entry, turn, {}, {});
    return asSend ? { ...turn.finalAnswer, delivery: turn.delivery ?? 'resumed' } : turn.finalAnswer;
  }

  /** Stops the turn if it still runs (recorded `killed`); answers whether it did. Never reaps. */
  async stopTurn(input: { session: string; turn: number }): Promise<boolean> {
    const entry = this.#taskSession(input.session);
    const turn = taskTurn(entry, input.turn);
    if (turn.status !== 'running') return false;
    await stopTurn(turn, 'killed', this.#table.graceMs);
    return true;
  }

  /** Every session of the checkout. */
  list(): SessionList {
    return this.#table.list();
  }

  /** A turn's state and every turn's. */
  status(input: { session: string; turn?: number }): Promise<SessionStatus> {
    return this.#table.status(input);
  }

  /** session_read: a tail, a page from a cursor, or a follow. */
  read(input: ReadInput, call: CallContext = {}): Promise<ReadAnswer> {
    return readSession(this.#table, input, call);
  }

  /** Stops a running session's turn, or reaps a finished session. */
  kill(input: { session: string }): Promise<KillAnswer> {
    return this.#table.kill(input);
  }

  /** A session resource: its status, its answer, its transcript or its stderr (of the latest turn, or of `turn`). */
  resource(input: { session: string; part: ResourcePart; turn?: number }): Promise<ResourceAnswer> {
    return sessionResource(this.#table, input);
  }

  /** A session's turns and their files, for the task board; unknown sessions are refused. */
  turnsOf(session: string): SessionTurns {
    return this.#table.turnsOf(session);
  }

  /** The session's directory (where a task keeps what it knows beside the harness's files). */
  sessionDir(session: string): string {
    return this.#table.sessionDir(session);
  }

  /** The session a task names; one that is gone (reaped, never known) is `not_found`, as its task is. */
  #taskSession(session: string): Session {
    try {
      return this.#table.get(session);
    } catch {
      throw new HarnessRefusal(`no task of session ${session}: the session is gone (reaped, or never known here)`, 'not_found');
    }
  }

  /** The depth of the running agent a client's process chain belongs to, if this table started it. */
  agentDepthOf(pids: readonly number[]): number | null {
    return this.#table.agentDepthOf(pids);
  }

  /** Graceful shutdown: every running group is stopped and its turn recorded as killed. */
  stop(): Promise<void> {
    return this.#table.stop();
  }

  /** Sessions with a turn running. */
  get liveCount(): number {
    return this.#table.liveCount;
  }
}
