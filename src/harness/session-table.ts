/**
 * The session table of a checkout: every session the harness started or adopted, by id, and what
 * the policy allows of them — how many run at once, how many finished ones are kept. One instance
 * lives in the shared server's harness thread, behind the `Harness` façade (table.ts); the parts
 * that start, follow and adopt sessions are handed it, and reach no other state.
 */
import { floorOfLayer } from '../floor/policy.js';
import type { Floor } from '../floor/rules.js';
import type { LayerView } from '../layer/view.js';
import type { ChildEnv } from '../platform/child-env.js';
import { processGroupOf } from '../platform/proc.js';
import { groupAlive, KILL_GRACE_MS } from './process.js';
import { harnessPolicy, type HarnessPolicy } from './profiles.js';
import type { KillAnswer, SessionList, SessionStatus } from './schemas.js';
import { latestTurn, type Session, type SessionTurns } from './session.js';
import type { SessionStore } from './store.js';
import { stopTurn, type TurnHost } from './turn.js';
import { turnUri, urisOfSession, urisOfTurn } from './resource-uris.js';
import { turnTaskId } from './turn-task.js';
import { HarnessRefusal } from './types.js';

/** What a harness is made with (by src/runtime/harness-runtime.ts). */
export interface HarnessOptions {
  root: string;
  layer: LayerView;
  store: SessionStore;
  /** This server's own delegation depth (its `MAJORDOMUS_SPAWN_DEPTH`). */
  depth: number;
  /** What agents inherit, before src/platform/child-env.ts takes out the role variables (default: this process's environment). */
  env?: ChildEnv;
  /** Between SIGTERM and SIGKILL when a turn is stopped (default KILL_GRACE_MS, 5 s). */
  killGraceMs?: number;
  /** Called once each turn has ended and its done.json is written. */
  onTurnEnd?: (session: string, turn: number) => void;
  /** Called when a session starts, grows its transcript, ends a turn or goes (the live page). */
  onChange?: (session: string) => void;
  /** Called when a turn starts or ends and when a session goes: what its readers are to be told. */
  onNews?: (news: HarnessNews) => void;
}

/**
 * What a change means to the readers of sessions, pushed rather than polled: the resource URIs it
 * changed (a client subscribed to one hears `notifications/resources/updated`) and the turns that
 * ended, as the ids of their MCP tasks (`<session>:<turn>`).
 */
export interface HarnessNews {
  uris: string[];
  endedTasks: string[];
}

/** The sessions by id and the state every part of the harness shares; the parts are handed it. */
export class SessionTable implements TurnHost {
  readonly root: string;
  readonly store: SessionStore;
  /** This server's own delegation depth. */
  readonly depth: number;
  /** What agents inherit (undefined: this process's environment). */
  readonly env: ChildEnv | undefined;
  readonly graceMs: number;
  readonly #onTurnEnd: HarnessOptions['onTurnEnd'];
  readonly #onChange: HarnessOptions['onChange'];
  readonly #onNews: HarnessOptions['onNews'];
  readonly #sessions = new Map<string, Session>();
  #layer: LayerView;
  #policy: HarnessPolicy;
  /** What no agent is given as a prompt (the layer's local half, protected files, the policy's deny globs). */
  #floor: Floor;
  #stopping = false;
  /** Launches under way, counted against max_live_sessions until their turn runs. */
  #starting = 0;

  constructor(options: HarnessOptions) {
    this.root = options.root;
    this.store = options.store;
    this.depth = options.depth;
    this.env = options.env;
    this.graceMs = options.killGraceMs ?? KILL_GRACE_MS;
    this.#onTurnEnd = options.onTurnEnd;
    this.#onChange = options.onChange;
    this.#onNews = options.onNews;
    this.#layer = options.layer;
    this.#policy = harnessPolicy(options.layer);
    this.#floor = floorOfLayer(options.layer);
  }

  /** The serving layer, where profiles are read from. */
  get layer(): LayerView {
    return this.#layer;
  }

  /** The serving layer's limits and scope. */
  get policy(): HarnessPolicy {
    return this.#policy;
  }

  /** What no agent is given as a prompt (src/floor/). */
  get floor(): Floor {
    return this.#floor;
  }

  /** Profiles and the policy are read from `layer` from now on; running sessions keep what they started with. */
  useLayer(layer: LayerView): void {
    this.#layer = layer;
    this.#policy = harnessPolicy(layer);
    this.#floor = floorOfLayer(layer);
  }

  /** The session `id`; an unknown one is refused. */
  get(id: string): Session {
    const entry = this.#sessions.get(id);
    if (entry === undefined) throw new HarnessRefusal(`no session ${id}; call session_list for the sessions of this checkout`);
    return entry;
  }

  /** Lists a session; only once it has a turn, which every reader takes for granted. */
  add(entry: Session): void {
    this.#sessions.set(entry.record.session, entry);
  }

  /** Sessions whose latest turn is running. */
  get liveCount(): number {
    let live = 0;
    for (const entry of this.#sessions.values()) if (entry.turns.at(-1)?.status === 'running') live += 1;
    return live;
  }

  /** Refuses a new running turn when the running ones and the launches under way fill max_live_sessions. */
  checkCapacity(): void {
    const max = this.#policy.limits.maxLiveSessions;
    if (max === null) return;
    const live = this.liveCount + this.#starting;
    if (live >= max) {
      throw new HarnessRefusal(`spawn refused: ${live} sessions are running, the most the policy allows (max_live_sessions ${max}); wait for one to finish or kill one (session_list, session_kill)`);
    }
  }

  /**
   * Holds a slot from the capacity check until the turn runs (or its launch fails), so concurrent
   * launches cannot all pass the same check; answers the release.
   */
  holdSlot(): () => void {
    this.#starting += 1;
    return () => {
      this.#starting -= 1;
    };
  }

  /** Refuses a new launch once shutdown began; the next server takes it. */
  refuseWhileStopping(): void {
    if (this.#stopping) throw new HarnessRefusal('the server is shutting down; start the session on the next one');
  }

  /** Tells the watcher (the live page) that `session` changed. */
  changed(session: string): void {
    try {
      this.#onChange?.(session);
    } catch {
      // A watcher's failure never stops an agent's turn.
    }
  }

  /** Tells the readers of the session that a turn runs (once the session is listed). */
  turnStarted(session: string, turn: number): void {
    this.changed(session);
    this.#tell({ uris: urisOfTurn(session, turn), endedTasks: [] });
  }

  /** Tells the turn's end to whoever waits for it, then reaps beyond retention. */
  turnEnded(session: string, turn: number): void {
    this.#onTurnEnd?.(session, turn);
    this.changed(session);
    this.#tell({ uris: urisOfTurn(session, turn), endedTasks: [turnTaskId(session, turn)] });
    void this.#reapBeyondRetention();
  }

  /** Takes a session out of the table (its files go with it): its readers hear that it is gone. */
  async #drop(entry: Session): Promise<void> {
    const session = entry.record.session;
    this.#sessions.delete(session);
    this.changed(session);
    this.#tell({ uris: urisOfSession(session, entry.turns.map((t) => t.turn)), endedTasks: [] });
    await this.store.remove(session);
  }

  #tell(news: HarnessNews): void {
    try {
      this.#onNews?.(news);
    } catch {
      // A listener's failure never stops an agent's turn.
    }
  }

  /** Every session, running ones first, then the latest turn first. */
  list(): SessionList {
    const rows = [...this.#sessions.values()].map((entry): SessionList['sessions'][number] => {
      const last = latestTurn(entry);
      return {
        session: entry.record.session,
        profile: entry.record.profile,
        agent: entry.record.agent,
        status: last.status,
        createdAt: entry.record.createdAt,
        lastTurnAt: last.startedAt,
        ...(last.done?.exitCode === null || last.done === null ? {} : { exitCode: last.done.exitCode }),
      };
    });
    rows.sort((a, b) => Number(b.status === 'running') - Number(a.status === 'running') || b.lastTurnAt.localeCompare(a.lastTurnAt));
    return { sessions: rows };
  }

  /** A turn's state (the latest unless `turn` names one) and every turn's. */
  async status(input: { session: string; turn?: number }): Promise<SessionStatus> {
    const entry = this.get(input.session);
    const turn = input.turn === undefined ? latestTurn(entry) : entry.turns.find((t) => t.turn === input.turn);
    if (turn === undefined) throw new HarnessRefusal(`session ${input.session} has no turn ${input.turn}; it has turns 1 to ${entry.turns.length}`);
    const transcriptBytes = await this.store.transcriptSize(entry.record.session, turn.turn);
    return {
      session: entry.record.session,
      status: turn.status,
      turn: turn.turn,
      turnFinished: turn.status !== 'running',
      transcriptBytes,
      hasResult: (turn.done?.answer ?? turn.parser?.answer ?? null) !== null,
      ...(turn.done?.exitCode === null || turn.done === null ? {} : { exitCode: turn.done.exitCode }),
      files: this.store.turnFiles(this.root, entry.record.session, turn.turn),
      turns: entry.turns.map((t) => ({
        turn: t.turn,
        status: t.status,
        ...(t.done?.exitCode === null || t.done === null ? {} : { exitCode: t.done.exitCode }),
        uri: turnUri(entry.record.session, t.turn, 'result'),
      })),
    };
  }

  /** Stops a running session's turn, or reaps a finished session (its files go too). */
  async kill(input: { session: string }): Promise<KillAnswer> {
    const entry = this.get(input.session);
    const last = latestTurn(entry);
    // Reaping now would remove the directory the next turn is being started in.
    if (entry.launching !== null) throw new HarnessRefusal(`session ${input.session} has a turn starting; kill it once it runs (session_status shows it)`);
    if (last.status !== 'running') {
      await this.#drop(entry);
      return { session: input.session, action: 'reaped', wasRunning: false };
    }
    const alive = last.pgid !== null && groupAlive(last.pgid);
    await stopTurn(last, 'killed', this.graceMs);
    return { session: input.session, action: alive ? 'terminated' : 'gone', wasRunning: true };
  }

  /**
   * The depth stamped on the running agent whose process group holds one of `pids` (a client's
   * process chain, nearest first), or null when none is an agent of this table. The server knows
   * its own agents: a client that never passes `MAJORDOMUS_SPAWN_DEPTH` on to the MCP servers it
   * starts (Codex passes a fixed set of variables) is still held to its depth.
   */
  agentDepthOf(pids: readonly number[]): number | null {
    const groups = new Map<number, number>();
    for (const entry of this.#sessions.values()) {
      const turn = latestTurn(entry);
      if (turn.status === 'running' && turn.pgid !== null && turn.agentDepth !== null) groups.set(turn.pgid, turn.agentDepth);
    }
    if (groups.size === 0) return null;
    for (const pid of pids) {
      const depth = groups.get(pid) ?? groups.get(processGroupOf(pid) ?? -1);
      if (depth !== undefined) return depth;
    }
    return null;
  }

  /** A session's turns and their files, for the task board; unknown sessions are refused. */
  turnsOf(session: string): SessionTurns {
    const entry = this.get(session);
    return {
      session,
      profile: entry.record.profile,
      agent: entry.record.agent,
      spawnedBy: entry.record.spawnedBy ?? null,
      turns: entry.turns.map((t) => ({ turn: t.turn, status: t.status, done: t.done, transcript: this.store.transcriptPath(session, t.turn) })),
      launching: entry.launching !== null,
    };
  }

  /** The session's directory (where a task keeps what it knows beside the harness's files). */
  sessionDir(session: string): string {
    return this.store.sessionDir(this.get(session).record.session);
  }

  /** Graceful shutdown: new launches are refused, every running group is stopped and its turn recorded as killed. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const running = [...this.#sessions.values()].map(latestTurn).filter((t) => t.status === 'running');
    await Promise.all(running.map((turn) => stopTurn(turn, 'killed', Math.min(this.graceMs, 2_000))));
  }

  /** Keeps at most max_sessions finished sessions: the longest finished go, files and all. */
  async #reapBeyondRetention(): Promise<void> {
    // A session starting its next turn is not finished, whatever its last turn did.
    const finished = [...this.#sessions.values()].filter((s) => s.launching === null && s.turns.at(-1)?.status !== 'running');
    const excess = finished.length - this.#policy.limits.maxSessions;
    if (excess <= 0) return;
    finished.sort((a, b) => (a.turns.at(-1)?.done?.endedAt ?? '').localeCompare(b.turns.at(-1)?.done?.endedAt ?? ''));
    for (const entry of finished.slice(0, excess)) await this.#drop(entry).catch(() => undefined);
  }
}
