/**
 * The session table of a checkout: every agent session the harness started, its turns, their
 * processes and files. One instance lives in the shared server's harness thread; every peer's
 * harness call reaches it, so every peer sees the same sessions.
 *
 * A turn ends exactly once (`#finish`): its done.json is written first, then its state changes,
 * then its followers wake. Everything a turn's process sends is attributed by the turn object it
 * was launched with, never by "the current turn", so a late exit never ends the wrong turn.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import type { LayerView } from '../layer/view.js';
import type { CallContext } from '../platform/call.js';
import type { ChildEnv } from '../platform/child-env.js';
import { processGroupOf, startTicksOf } from '../platform/proc.js';
import { harnessPolicy, nominatedProfile, profilesOf, type HarnessPolicy, type Profile } from './profiles.js';
import { groupAlive, isAlive, KILL_GRACE_MS, launch, resolveCommand, signalGroup, stopGroup } from './process.js';
import { childPath, prepareTurn, promptOf, resolveCwd, type Prepared, type PromptInput } from './prepare.js';
import type { KillAnswer, LaunchAnswer, ProfileList, ReadAnswer, ResourceAnswer, SendAnswer, SessionList, SessionStatus } from './schemas.js';
import { SessionStore, type LaunchRecord, type SessionRecord, type TurnDone, type TurnStatus } from './store.js';
import { decodeCursor, encodeCursor, readTranscript, tailLines, TranscriptWriter } from './transcript.js';
import { HarnessRefusal, type AgentName } from './types.js';
import { adapterFor } from './vendors/index.js';
import type { TurnParser } from './vendors/adapter.js';
import { endedTurn, launchSettings, STDERR_TAIL, type Session, type SessionTurns, type Turn } from './session.js';
import { floorOfLayer } from '../floor/policy.js';
import type { Floor } from '../floor/rules.js';
import { checkMode } from './modes.js';

/** A read answers at most this much transcript (whole lines; one longer line is cut). */
export const READ_CAP_BYTES = 60_000;
/** `text` of a result is capped at this many characters. */
const TEXT_CAP = 4_000;
const DEFAULT_WAIT_SECONDS = 120;
/** How long a finished turn may take to release its pipes once its leader exited. */
const PIPE_CLOSE_GRACE_MS = 2_000;

export interface HarnessOptions {
  root: string;
  layer: LayerView;
  store: SessionStore;
  /** This server's own delegation depth (its `MAJORDOMUS_SPAWN_DEPTH`). */
  depth: number;
  /** What agents inherit, before src/platform/child-env.ts takes out the role variables (default: this process's environment). */
  env?: ChildEnv;
  killGraceMs?: number;
  /** Called once each turn has ended and its done.json is written. */
  onTurnEnd?: (session: string, turn: number) => void;
  /** Called when a session starts, grows its transcript, ends a turn or goes (the live page). */
  onChange?: (session: string) => void;
}

export interface LaunchInput extends PromptInput {
  mode?: string;
  wait?: boolean;
  timeout_seconds?: number;
}

export interface SpawnInput extends LaunchInput {
  profile: string;
  cwd?: string;
  with_config?: Record<string, string>;
  args?: string[];
}

export interface SendInput extends LaunchInput {
  session: string;
  steer?: boolean;
}

const WITH_CONFIG_KEYS = new Set(['model', 'effort', 'mode']);

function nowIso(): string {
  return new Date().toISOString();
}

function cap(text: string, limit = TEXT_CAP): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…[${text.length - limit} more characters]`;
}

/** What the harness capabilities may do with the table. */
export type HarnessAccess = Pick<Harness, 'listProfiles' | 'spawn' | 'send' | 'list' | 'status' | 'read' | 'kill' | 'resource' | 'turnsOf' | 'sessionDir'>;

export class Harness {
  #options: HarnessOptions;
  readonly #store: SessionStore;
  readonly #sessions = new Map<string, Session>();
  #policy: HarnessPolicy;
  /** What no agent is given as a prompt (the layer's local half, protected files, the policy's deny globs). */
  #floor: Floor;
  #stopping = false;
  /** Launches under way, counted against max_live_sessions until their turn runs. */
  #starting = 0;

  constructor(options: HarnessOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#policy = harnessPolicy(options.layer);
    this.#floor = floorOfLayer(options.layer);
  }

  /**
   * A new generation of the layer serves: profiles and the policy are read from it from now on
   * (sessions already running keep what they were started with).
   */
  useLayer(layer: LayerView): void {
    this.#options = { ...this.#options, layer };
    this.#policy = harnessPolicy(layer);
    this.#floor = floorOfLayer(layer);
  }

  /**
   * Adopts what earlier servers left: finished turns stay readable; a turn whose owner died is
   * `lost` and its process group, verified by pid, group and start time, is killed. Sessions of a
   * live owner are never touched.
   */
  async adopt(): Promise<{ adopted: number; lost: number; killed: number }> {
    let adopted = 0;
    let lost = 0;
    let killed = 0;
    for (const stored of await this.#store.readAll()) {
      const { record } = stored;
      const ownerAlive = record.ownerPid !== process.pid && isAlive(record.ownerPid) && (record.ownerStartTicks === null || startTicksOf(record.ownerPid) === record.ownerStartTicks);
      if (ownerAlive) continue;
      const turns: Turn[] = [];
      for (const { turn, done } of stored.turns) {
        let outcome = done;
        if (outcome === null) {
          if (turn === record.turn && record.pid !== null && record.pgid !== null && this.#sameProcess(record)) {
            signalGroup(record.pgid, 'SIGKILL');
            killed += 1;
          }
          outcome = {
            turn,
            status: 'lost',
            exitCode: null,
            signal: null,
            answer: null,
            error: 'the server that ran this turn ended while it was running',
            startedAt: turn === record.turn ? record.startedAt : record.createdAt,
            endedAt: nowIso(),
          };
          await this.#store.writeDone(record.session, outcome);
          lost += 1;
        }
        turns.push(endedTurn(outcome));
      }
      if (turns.length === 0) continue;
      record.ownerPid = process.pid;
      record.ownerStartTicks = startTicksOf(process.pid);
      await this.#store.saveRecord(record);
      this.#sessions.set(record.session, { record, turns, launching: null, argv: [], envNames: [] });
      adopted += 1;
    }
    return { adopted, lost, killed };
  }

  listProfiles(): ProfileList {
    const profiles: ProfileList['profiles'] = [];
    for (const profile of profilesOf(this.#options.layer).values()) {
      if (!profile.harness.enabled || !this.#policy.inScope(profile.id)) continue;
      const error = this.#profileProblem(profile);
      profiles.push({
        id: profile.id,
        agent: profile.agent,
        ...(profile.model === undefined ? {} : { model: profile.model }),
        ...(profile.effort === undefined ? {} : { effort: profile.effort }),
        ...(profile.mode === undefined ? {} : { mode: profile.mode }),
        ...(profile.cwd === undefined ? {} : { cwd: profile.cwd }),
        ...(profile.description === undefined ? {} : { description: profile.description }),
        isDefault: this.#policy.defaultProfile === profile.id,
        ...(error === null ? {} : { error }),
      });
    }
    profiles.sort((a, b) => String(a.id).localeCompare(String(b.id)));
    return { profiles };
  }

  async spawn(input: SpawnInput, call: CallContext = {}, spawnedBy: string | null = null): Promise<LaunchAnswer> {
    this.#refuseWhileStopping();
    const depth = call.depth ?? this.#options.depth;
    const limits = this.#policy.limits;
    if (depth >= limits.maxDepth) throw new HarnessRefusal(`spawn refused: delegation limit (depth ${depth}, max ${limits.maxDepth})`);
    this.#checkCapacity();
    // The slot is held from the check until the turn runs (or the spawn fails): concurrent
    // spawns cannot all pass the same check.
    this.#starting += 1;
    let started: { entry: Session; turn: Turn };
    try {
      started = await this.#startSession(input, depth, spawnedBy);
    } finally {
      this.#starting -= 1;
    }
    return this.#launchAnswer(started.entry, started.turn, input, call);
  }

  /** The checks after capacity, in HARNESS.md's order, then the session and its first turn. */
  async #startSession(input: SpawnInput, depth: number, spawnedBy: string | null): Promise<{ entry: Session; turn: Turn }> {
    const withConfig = input.with_config ?? {};
    const denied = Object.keys(withConfig).filter((key) => !WITH_CONFIG_KEYS.has(key));
    if (denied.length > 0) {
      throw new HarnessRefusal(`with_config may set only model, effort and mode; remove ${denied.map((k) => JSON.stringify(k)).join(', ')}`);
    }
    const profile = nominatedProfile(this.#options.layer, this.#policy, input.profile);
    checkMode(adapterFor(profile.agent), profile, input.mode ?? withConfig.mode);
    const launchRecord: LaunchRecord = {
      cwd: input.cwd ?? profile.cwd ?? '',
      args: [...(profile.args ?? []), ...(input.args ?? [])],
      ...launchSettings({
        model: withConfig.model ?? profile.model,
        effort: withConfig.effort ?? profile.effort,
        mode: input.mode ?? withConfig.mode ?? profile.mode,
      }),
    };
    const prompt = await promptOf(this.#options.root, this.#floor, input);
    const session = randomUUID();
    const createdAt = nowIso();
    const record: SessionRecord = {
      session,
      profile: profile.id,
      agent: profile.agent,
      launch: launchRecord,
      pid: null,
      pgid: null,
      startTicks: null,
      ownerPid: process.pid,
      ownerStartTicks: startTicksOf(process.pid),
      createdAt,
      startedAt: createdAt,
      turn: 0,
      ...(spawnedBy === null ? {} : { spawnedBy }),
    };
    const prepared = await this.#prepare(record, profile, prompt, null, depth);
    const entry: Session = { record, turns: [], launching: null, argv: prepared.argv, envNames: prepared.envNames };
    const turn = await this.#startTurn(entry, prepared, prompt);
    // Listed only once it has a turn: every reader takes a session's latest turn for granted
    // (a session_list while a peer spawned used to fail on the turnless entry).
    this.#sessions.set(session, entry);
    return { entry, turn };
  }

  async send(input: SendInput, call: CallContext = {}): Promise<SendAnswer> {
    this.#refuseWhileStopping();
    const entry = this.#session(input.session);
    const current = entry.turns.at(-1);
    const running = current?.status === 'running';
    if (running && !input.steer) {
      throw new HarnessRefusal(`session ${input.session} already has a turn in flight; wait (session_read with wait), read, or steer (session_send with steer: true)`);
    }
    if (entry.record.vendorId === undefined) {
      throw new HarnessRefusal(`cannot resume session ${input.session}: the agent never reported a session id; spawn a new session instead`);
    }
    if (entry.launching !== null) {
      throw new HarnessRefusal(
        entry.launching === 'steer'
          ? `session ${input.session} is already being steered; wait for that turn to start`
          : `session ${input.session} has a turn starting; wait for it, then read or steer`,
      );
    }
    if (!running) this.#checkCapacity();
    const profile = profilesOf(this.#options.layer).get(entry.record.profile);
    if (profile === undefined || !profile.harness.enabled || !this.#policy.inScope(profile.id)) {
      throw new HarnessRefusal(`profile "${entry.record.profile}" of session ${input.session} is no longer nominated for the harness; call list_profiles`);
    }
    checkMode(adapterFor(profile.agent), profile, input.mode);
    entry.launching = running ? 'steer' : 'send';
    if (!running) this.#starting += 1;
    let turn: Turn;
    try {
      const prompt = await promptOf(this.#options.root, this.#floor, input);
      const launch = input.mode === undefined ? entry.record.launch : { ...entry.record.launch, mode: input.mode };
      const prepared = await this.#prepare({ ...entry.record, launch }, profile, prompt, entry.record.vendorId, call.depth ?? this.#options.depth);
      entry.record.launch = launch;
      if (running && current) await this.#stopTurn(current, 'steered');
      entry.argv = prepared.argv;
      entry.envNames = prepared.envNames;
      turn = await this.#startTurn(entry, prepared, prompt);
    } finally {
      entry.launching = null;
      if (!running) this.#starting -= 1;
    }
    return { ...(await this.#launchAnswer(entry, turn, input, call)), delivery: running ? 'steered' : 'resumed' };
  }

  list(): SessionList {
    const rows = [...this.#sessions.values()].map((entry): SessionList['sessions'][number] => {
      const last = entry.turns.at(-1) as Turn;
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

  async status(input: { session: string; turn?: number }): Promise<SessionStatus> {
    const entry = this.#session(input.session);
    const turn = input.turn === undefined ? (entry.turns.at(-1) as Turn) : entry.turns.find((t) => t.turn === input.turn);
    if (turn === undefined) throw new HarnessRefusal(`session ${input.session} has no turn ${input.turn}; it has turns 1 to ${entry.turns.length}`);
    const transcriptBytes = await this.#store.transcriptSize(entry.record.session, turn.turn);
    return {
      session: entry.record.session,
      status: turn.status,
      turn: turn.turn,
      turnFinished: turn.status !== 'running',
      transcriptBytes,
      hasResult: (turn.done?.answer ?? turn.parser?.answer ?? null) !== null,
      ...(turn.done?.exitCode === null || turn.done === null ? {} : { exitCode: turn.done.exitCode }),
      turns: entry.turns.map((t) => ({ turn: t.turn, status: t.status, ...(t.done?.exitCode === null || t.done === null ? {} : { exitCode: t.done.exitCode }) })),
    };
  }

  async read(input: { session: string; tail?: number; cursor?: string; wait?: boolean; timeout_seconds?: number }, call: CallContext = {}): Promise<ReadAnswer> {
    const entry = this.#session(input.session);
    const id = entry.record.session;
    let position: { t: number; o: number };
    let lines: string[] = [];
    if (input.cursor !== undefined) {
      position = decodeCursor(input.cursor);
      if (!entry.turns.some((t) => t.turn === position.t)) throw new HarnessRefusal('malformed cursor: pass nextCursor as it was given, or omit it');
    } else {
      const last = entry.turns.at(-1) as Turn;
      const tail = await tailLines(this.#store.transcriptPath(id, last.turn), input.tail ?? 200);
      lines = input.wait ? [] : tail.lines;
      position = { t: last.turn, o: tail.next };
    }
    if (input.wait) {
      const followed = await this.#follow(entry, position, call, deadlineOf(input.timeout_seconds));
      lines = followed.lines;
      position = followed.position;
    } else if (input.cursor !== undefined) {
      const read = await this.#readFrom(entry, position, READ_CAP_BYTES);
      lines = read.lines;
      position = read.position;
    }
    const finished = await this.#allRead(entry, position);
    const stderr = await this.#stderrTail(entry);
    return {
      session: id,
      lines,
      ...(finished ? {} : { nextCursor: encodeCursor(position) }),
      ...(stderr === '' ? {} : { stderr }),
    };
  }

  async kill(input: { session: string }): Promise<KillAnswer> {
    const entry = this.#session(input.session);
    const last = entry.turns.at(-1) as Turn;
    // Reaping now would remove the directory the next turn is being started in.
    if (entry.launching !== null) throw new HarnessRefusal(`session ${input.session} has a turn starting; kill it once it runs (session_status shows it)`);
    if (last.status !== 'running') {
      this.#sessions.delete(input.session);
      this.#changed(input.session);
      await this.#store.remove(input.session);
      return { session: input.session, action: 'reaped', wasRunning: false };
    }
    const alive = last.pgid !== null && groupAlive(last.pgid);
    await this.#stopTurn(last, 'killed');
    return { session: input.session, action: alive ? 'terminated' : 'gone', wasRunning: true };
  }

  /** A session resource: its status, its answer, its transcript or its stderr. */
  async resource(input: { session: string; part: 'status' | 'result' | 'transcript' | 'stderr' }): Promise<ResourceAnswer> {
    const entry = this.#session(input.session);
    const last = entry.turns.at(-1) as Turn;
    switch (input.part) {
      case 'status':
        return { text: JSON.stringify(await this.status({ session: input.session })), mimeType: 'application/json' };
      case 'result':
        return { text: resultText(last), mimeType: 'text/plain' };
      case 'transcript': {
        const read = await readTranscript(this.#store.transcriptPath(input.session, last.turn), { offset: 0, maxBytes: 1024 * 1024 });
        return { text: read.lines.map((line: string) => `${line}\n`).join(''), mimeType: 'application/jsonl' };
      }
      case 'stderr':
        return { text: await this.#stderrTail(entry, 64 * 1024), mimeType: 'text/plain' };
    }
  }

  /** A session's turns and their files, for the task board; unknown sessions are refused. */
  turnsOf(session: string): SessionTurns {
    const entry = this.#session(session);
    return {
      session,
      profile: entry.record.profile,
      agent: entry.record.agent,
      spawnedBy: entry.record.spawnedBy ?? null,
      turns: entry.turns.map((t) => ({ turn: t.turn, status: t.status, done: t.done, transcript: this.#store.transcriptPath(session, t.turn) })),
      launching: entry.launching !== null,
    };
  }

  /** The session's directory (where a task keeps what it knows beside the harness's files). */
  sessionDir(session: string): string {
    return this.#store.sessionDir(this.#session(session).record.session);
  }

  /** Graceful shutdown: every running group is stopped and its turn recorded as killed. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const running = [...this.#sessions.values()].map((s) => s.turns.at(-1) as Turn).filter((t) => t.status === 'running');
    await Promise.all(running.map((turn) => this.#stopTurn(turn, 'killed', Math.min(this.#grace(), 2_000))));
  }

  get liveCount(): number {
    let live = 0;
    for (const entry of this.#sessions.values()) if (entry.turns.at(-1)?.status === 'running') live += 1;
    return live;
  }

  // ---------------------------------------------------------------------------------------------

  #changed(session: string): void {
    try {
      this.#options.onChange?.(session);
    } catch {
      // A watcher's failure never stops an agent's turn.
    }
  }

  #grace(): number {
    return this.#options.killGraceMs ?? KILL_GRACE_MS;
  }

  #refuseWhileStopping(): void {
    if (this.#stopping) throw new HarnessRefusal('the server is shutting down; start the session on the next one');
  }

  #checkCapacity(): void {
    const max = this.#policy.limits.maxLiveSessions;
    const live = this.liveCount + this.#starting;
    if (live >= max) {
      throw new HarnessRefusal(`spawn refused: ${live} sessions are running, the most the policy allows (max_live_sessions ${max}); wait for one to finish or kill one (session_list, session_kill)`);
    }
  }

  #session(id: string): Session {
    const entry = this.#sessions.get(id);
    if (entry === undefined) throw new HarnessRefusal(`no session ${id}; call session_list for the sessions of this checkout`);
    return entry;
  }

  #profileProblem(profile: Profile): string | null {
    try {
      const cwd = resolveCwd(this.#options.root, profile.cwd ?? '');
      const command = profile.command ?? adapterFor(profile.agent).defaultCommand;
      if (resolveCommand(command, cwd, childPath(profile, this.#options.env)) === null) return `the ${profile.agent} CLI "${command}" was not found (install it, or set command in the profile)`;
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  #sameProcess(record: SessionRecord): boolean {
    if (record.pid === null || record.pgid === null) return false;
    const ticks = startTicksOf(record.pid);
    if (ticks === null) return groupAlive(record.pgid) && processGroupOf(record.pgid) === null; // leader gone, group members left
    return ticks === record.startTicks && processGroupOf(record.pid) === record.pgid;
  }

  async #prepare(record: SessionRecord, profile: Profile, prompt: string, resumeId: string | null, depth: number): Promise<Prepared> {
    return prepareTurn({ root: this.#options.root, store: this.#store, env: this.#options.env }, record, profile, prompt, resumeId, depth);
  }

  async #startTurn(entry: Session, prepared: Prepared, prompt: string): Promise<Turn> {
    const { record } = entry;
    const number = (entry.turns.at(-1)?.turn ?? 0) + 1;
    await this.#store.prepareTurn(record.session, number);
    const turn: Turn = {
      turn: number,
      status: 'running',
      startedAt: nowIso(),
      done: null,
      listeners: new Set(),
      pid: null,
      pgid: null,
      parser: adapterFor(record.agent).turnParser(),
      stopping: null,
      ended: Promise.resolve(),
      stderrTail: '',
      promptBytes: Buffer.byteLength(prompt),
    };
    entry.turns.push(turn);
    record.turn = number;
    record.startedAt = turn.startedAt;
    this.#changed(record.session);
    let launched;
    try {
      launched = await launch({ command: prepared.command, args: prepared.args, cwd: prepared.cwd, env: prepared.env, stdin: prepared.stdin });
    } catch (error) {
      const why = `failed to launch ${prepared.command}: ${error instanceof Error ? error.message : String(error)}`;
      record.pid = null;
      record.pgid = null;
      await this.#store.saveRecord(record);
      await this.#finish(entry, turn, { exitCode: null, signal: null, error: why });
      return turn;
    }
    turn.pid = launched.pid;
    turn.pgid = launched.pgid;
    Object.assign(record, { pid: launched.pid, pgid: launched.pgid, startTicks: launched.startTicks });
    await this.#store.saveRecord(record);
    const parser = turn.parser as TurnParser;
    const wake = (): void => {
      for (const listener of turn.listeners) listener();
    };
    const writer = new TranscriptWriter({
      path: this.#store.transcriptPath(record.session, number),
      parser,
      onEntry: () => {
        if (parser.vendorId !== null && record.vendorId !== parser.vendorId) {
          record.vendorId = parser.vendorId;
          void this.#store.saveRecord(record).catch(() => undefined);
        }
        wake();
        this.#changed(record.session);
      },
    });
    const stderr = this.#store.stderrPath(record.session, number);
    const stderrFile = createWriteStream(stderr, { flags: 'a', mode: 0o600 });
    launched.stdout.attach((chunk) => writer.push(chunk));
    launched.stderr.attach((chunk) => {
      stderrFile.write(chunk);
      turn.stderrTail = (turn.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    turn.ended = (async () => {
      const { code, signal } = await launched.exited;
      // The leader is gone; whatever it forked goes too, so inherited pipes close.
      if (groupAlive(launched.pgid)) await stopGroup(launched.pgid, Math.min(this.#grace(), 2_000));
      await Promise.race([launched.closed, new Promise((r) => setTimeout(r, PIPE_CLOSE_GRACE_MS))]);
      await writer.end();
      await new Promise<void>((r) => stderrFile.end(r));
      await this.#finish(entry, turn, { exitCode: code, signal, error: null });
    })();
    return turn;
  }

  /** Records how the turn ended — done.json first, then the state — and wakes its followers. */
  async #finish(entry: Session, turn: Turn, end: { exitCode: number | null; signal: string | null; error: string | null }): Promise<void> {
    if (turn.status !== 'running') return;
    const parser = turn.parser;
    const answer = parser?.answer ?? null;
    let error = end.error ?? parser?.error ?? null;
    // No answer is a failure whatever the code: a CLI stopped mid-turn may well exit 0 (gemini does).
    if (error === null && turn.stopping === null && answer === null) {
      error = end.exitCode === null ? `ended by signal ${end.signal ?? 'unknown'} with no answer` : `exited with code ${end.exitCode} and no answer`;
    }
    const done: TurnDone = {
      turn: turn.turn,
      status: turn.stopping ?? 'exited',
      exitCode: end.exitCode,
      signal: end.signal,
      answer,
      error,
      startedAt: turn.startedAt,
      endedAt: nowIso(),
    };
    try {
      await this.#store.writeDone(entry.record.session, done);
    } catch {
      // The directory was reaped meanwhile (session_kill of a finished session cannot race this,
      // but a person deleting .ai/local can): the turn still ends in memory.
    }
    turn.done = done;
    turn.status = done.status;
    for (const listener of turn.listeners) listener();
    this.#options.onTurnEnd?.(entry.record.session, turn.turn);
    this.#changed(entry.record.session);
    void this.#reapBeyondRetention();
  }

  async #stopTurn(turn: Turn, as: 'killed' | 'steered', grace = this.#grace()): Promise<void> {
    if (turn.status !== 'running') return;
    turn.stopping ??= as;
    if (turn.pgid !== null) await stopGroup(turn.pgid, grace);
    await turn.ended;
  }

  async #reapBeyondRetention(): Promise<void> {
    // A session starting its next turn is not finished, whatever its last turn did.
    const finished = [...this.#sessions.values()].filter((s) => s.launching === null && s.turns.at(-1)?.status !== 'running');
    const excess = finished.length - this.#policy.limits.maxSessions;
    if (excess <= 0) return;
    finished.sort((a, b) => (a.turns.at(-1)?.done?.endedAt ?? '').localeCompare(b.turns.at(-1)?.done?.endedAt ?? ''));
    for (const entry of finished.slice(0, excess)) {
      this.#sessions.delete(entry.record.session);
      this.#changed(entry.record.session);
      await this.#store.remove(entry.record.session).catch(() => undefined);
    }
  }

  async #launchAnswer(entry: Session, turn: Turn, input: LaunchInput, call: CallContext): Promise<LaunchAnswer> {
    let timedOut = false;
    let position = { t: turn.turn, o: 0 };
    if (input.wait) {
      const followed = await this.#follow(entry, position, call, deadlineOf(input.timeout_seconds), Number.POSITIVE_INFINITY);
      position = followed.position;
      timedOut = followed.why === 'deadline';
    }
    const { record } = entry;
    const running = turn.status === 'running';
    const answer = turn.done?.answer ?? null;
    const finished = await this.#allRead(entry, position);
    return {
      session: record.session,
      profile: record.profile,
      agent: record.agent,
      status: running ? ('running' as const) : ('exited' as const),
      turn: turn.turn,
      ...(turn.done?.exitCode === null || turn.done === null ? {} : { exitCode: turn.done.exitCode }),
      ...(input.wait ? { timedOut } : {}),
      sessionInfo: this.#sessionInfo(entry, turn),
      text: running ? `session ${record.session} is running turn ${turn.turn}; follow it with session_read (wait: true)` : cap(resultText(turn)),
      ...(finished ? {} : { nextCursor: encodeCursor(position) }),
      ...(answer === null ? {} : { answer: cap(answer, 64 * 1024) }),
    };
  }

  #sessionInfo(entry: Session, turn: Turn): LaunchAnswer['sessionInfo'] {
    const { record } = entry;
    const dir = relative(this.#options.root, this.#store.sessionDir(record.session));
    const turnDir = relative(this.#options.root, this.#store.turnDir(record.session, turn.turn));
    return {
      profile: record.profile,
      agent: record.agent,
      ...launchSettings(record.launch),
      cwd: record.launch.cwd === '' ? '.' : record.launch.cwd,
      startedAt: record.createdAt,
      turnStartedAt: turn.startedAt,
      pid: turn.pid,
      files: { dir, transcript: `${turnDir}/transcript.jsonl`, stderr: `${turnDir}/stderr.log`, done: `${turnDir}/done.json` },
      argv: entry.argv,
      env: entry.envNames,
      promptBytes: turn.promptBytes,
    };
  }

  /** Reads from `position` up to `maxBytes`, moving on to the next turn once one is read whole. */
  async #readFrom(entry: Session, position: { t: number; o: number }, maxBytes: number): Promise<{ lines: string[]; position: { t: number; o: number } }> {
    const lines: string[] = [];
    let at = { ...position };
    let budget = maxBytes;
    for (;;) {
      const path = this.#store.transcriptPath(entry.record.session, at.t);
      const read = await readTranscript(path, { offset: at.o, maxBytes: budget });
      lines.push(...read.lines);
      budget -= read.next - at.o;
      at = { t: at.t, o: read.next };
      const turn = entry.turns.find((t) => t.turn === at.t);
      const later = entry.turns.find((t) => t.turn > at.t);
      if (budget <= 0 || turn?.status === 'running' || later === undefined) return { lines, position: at };
      if (at.o < (await this.#store.transcriptSize(entry.record.session, at.t))) return { lines, position: at };
      at = { t: later.turn, o: 0 };
    }
  }

  async #allRead(entry: Session, position: { t: number; o: number }): Promise<boolean> {
    const last = entry.turns.at(-1) as Turn;
    if (last.status === 'running' || position.t !== last.turn) return false;
    return position.o >= (await this.#store.transcriptSize(entry.record.session, last.turn));
  }

  /**
   * Streams each new line from `position` as progress until the turn at the end of the session
   * ends, the caller cancels, the deadline passes, or `maxBytes` were gathered (the result then
   * holds exactly what was streamed, and the cursor goes on from there: nothing lost, nothing twice).
   */
  async #follow(
    entry: Session,
    start: { t: number; o: number },
    call: CallContext,
    deadline: number,
    maxBytes = READ_CAP_BYTES,
  ): Promise<{ lines: string[]; position: { t: number; o: number }; why: 'ended' | 'cancelled' | 'deadline' | 'full' }> {
    const lines: string[] = [];
    let position = start;
    let gathered = 0;
    let wake: (() => void) | null = null;
    const poke = (): void => wake?.();
    const watched = new Set<Turn>();
    const abort = (): void => poke();
    call.signal?.addEventListener('abort', abort);
    try {
      for (;;) {
        for (const turn of entry.turns) {
          if (!watched.has(turn)) {
            turn.listeners.add(poke);
            watched.add(turn);
          }
        }
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const read = await this.#readFrom(entry, position, maxBytes === Number.POSITIVE_INFINITY ? READ_CAP_BYTES : maxBytes - gathered);
        position = read.position;
        for (const line of read.lines) {
          gathered += Buffer.byteLength(line) + 1;
          if (maxBytes !== Number.POSITIVE_INFINITY) lines.push(line);
          call.onProgress?.(line);
        }
        if (call.signal?.aborted) return { lines, position, why: 'cancelled' };
        if (gathered >= maxBytes) return { lines, position, why: 'full' };
        if (read.lines.length > 0) continue;
        if (await this.#allRead(entry, position)) return { lines, position, why: 'ended' };
        const left = deadline - Date.now();
        if (left <= 0) return { lines, position, why: 'deadline' };
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
      }
    } finally {
      call.signal?.removeEventListener('abort', abort);
      for (const turn of watched) turn.listeners.delete(poke);
    }
  }

  async #stderrTail(entry: Session, limit = STDERR_TAIL): Promise<string> {
    const last = entry.turns.at(-1) as Turn;
    if (last.status === 'running' && limit <= STDERR_TAIL) return last.stderrTail.slice(-limit);
    const text = await readFile(this.#store.stderrPath(entry.record.session, last.turn), 'utf8').catch(() => '');
    return text.slice(-limit);
  }
}

function deadlineOf(seconds: number | undefined): number {
  return Date.now() + (seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
}

/** `/result`: the answer, or why there is none. */
function resultText(turn: Turn): string {
  if (turn.status === 'running') return 'running: no result yet';
  const done = turn.done as TurnDone;
  // An error event wins over a normal ending.
  if (done.error !== null) return `error: ${done.error}`;
  if (done.answer !== null) return done.answer;
  if (done.status === 'killed' || done.status === 'steered' || done.status === 'lost') return `error: the turn was ${done.status}`;
  return `error: exited with code ${done.exitCode ?? 'none'} and no answer`;
}

export type { AgentName, SessionTurns };
