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
import type { SessionTurns } from './session.js';
import { SessionTable, type HarnessOptions } from './session-table.js';

export { READ_CAP_BYTES } from './follow.js';
export type { LaunchInput, SendInput, SpawnInput } from './launching.js';
export type { SessionTurns } from './session.js';
export type { HarnessNews, HarnessOptions } from './session-table.js';
export type { AgentName } from './types.js';

/** What the harness capabilities may do with the table. */
export type HarnessAccess = Pick<Harness, 'listProfiles' | 'spawn' | 'send' | 'list' | 'status' | 'read' | 'kill' | 'resource' | 'turnsOf' | 'sessionDir'>;

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

  /** A new session of a nominated profile (`spawnedBy`: the peer that asked, if one did). */
  async spawn(input: SpawnInput, call: CallContext = {}, spawnedBy: string | null = null): Promise<LaunchAnswer> {
    const { entry, turn } = await spawnSession(this.#table, input, call, spawnedBy);
    return launchAnswer(this.#table, entry, turn, input, call);
  }

  /** The session's next turn: resumed, or steered when `steer` and a turn runs. */
  async send(input: SendInput, call: CallContext = {}): Promise<SendAnswer> {
    const { entry, turn, delivery } = await sendTurn(this.#table, input, call);
    return { ...(await launchAnswer(this.#table, entry, turn, input, call)), delivery };
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
