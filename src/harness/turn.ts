/**
 * A turn's lifecycle: its directory and files, its process started, its output written to the
 * transcript and stderr, and its end recorded exactly once (`finishTurn`): done.json first, then
 * the state, then its followers wake. Everything the process sends is attributed by the turn
 * object it was launched with, never by "the current turn", so a late exit never ends the wrong turn.
 */
import { createWriteStream } from 'node:fs';
import { groupAlive, launch, stopGroup } from './process.js';
import type { Prepared } from './prepare.js';
import { STDERR_TAIL, type Session, type Turn } from './session.js';
import type { SessionStore, TurnDone } from './store.js';
import { TranscriptWriter } from './transcript.js';
import type { TurnParser } from './vendors/adapter.js';
import { adapterFor } from './vendors/index.js';

/** How long a finished turn may take to release its pipes once its leader exited. */
const PIPE_CLOSE_GRACE_MS = 2_000;

/** What a turn reports to: the session table it belongs to (src/harness/session-table.ts). */
export interface TurnHost {
  readonly store: SessionStore;
  /** Between SIGTERM and SIGKILL when a turn is stopped. */
  readonly graceMs: number;
  /** The session grew, started or ended a turn (the live page). */
  changed(session: string): void;
  /** The turn's done.json is written and its followers woken. */
  turnEnded(session: string, turn: number): void;
}

/** Starts the session's next turn; a launch that fails ends the turn at once, with why. */
export async function startTurn(host: TurnHost, entry: Session, prepared: Prepared, prompt: string): Promise<Turn> {
  const { store } = host;
  const { record } = entry;
  const number = (entry.turns.at(-1)?.turn ?? 0) + 1;
  await store.prepareTurn(record.session, number);
  const turn: Turn = {
    turn: number,
    status: 'running',
    startedAt: new Date().toISOString(),
    done: null,
    listeners: new Set(),
    pid: null,
    pgid: null,
    parser: adapterFor(record.agent).turnParser(),
    stopping: null,
    ended: Promise.resolve(),
    stderrTail: '',
    promptBytes: Buffer.byteLength(prompt),
    delivery: null,
    finalAnswer: null,
    agentDepth: prepared.agentDepth,
  };
  entry.turns.push(turn);
  record.turn = number;
  record.startedAt = turn.startedAt;
  host.changed(record.session);
  let launched;
  try {
    launched = await launch({ command: prepared.command, args: prepared.args, cwd: prepared.cwd, env: prepared.env, stdin: prepared.stdin });
  } catch (error) {
    const why = `failed to launch ${prepared.command}: ${error instanceof Error ? error.message : String(error)}`;
    record.pid = null;
    record.pgid = null;
    await store.saveRecord(record);
    await finishTurn(host, entry, turn, { exitCode: null, signal: null, error: why });
    return turn;
  }
  turn.pid = launched.pid;
  turn.pgid = launched.pgid;
  Object.assign(record, { pid: launched.pid, pgid: launched.pgid, startTicks: launched.startTicks });
  await store.saveRecord(record);
  const parser = turn.parser as TurnParser;
  const wake = (): void => {
    for (const listener of turn.listeners) listener();
  };
  const writer = new TranscriptWriter({
    path: store.transcriptPath(record.session, number),
    parser,
    onEntry: () => {
      if (parser.vendorId !== null && record.vendorId !== parser.vendorId) {
        record.vendorId = parser.vendorId;
        void store.saveRecord(record).catch(() => undefined);
      }
      wake();
      host.changed(record.session);
    },
  });
  const stderr = store.stderrPath(record.session, number);
  const stderrFile = createWriteStream(stderr, { flags: 'a', mode: 0o600 });
  launched.stdout.attach((chunk) => writer.push(chunk));
  launched.stderr.attach((chunk) => {
    stderrFile.write(chunk);
    turn.stderrTail = (turn.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  turn.ended = (async () => {
    const { code, signal } = await launched.exited;
    // The leader is gone; whatever it forked goes too, so inherited pipes close.
    if (groupAlive(launched.pgid)) await stopGroup(launched.pgid, Math.min(host.graceMs, 2_000));
    await Promise.race([launched.closed, new Promise((r) => setTimeout(r, PIPE_CLOSE_GRACE_MS))]);
    await writer.end();
    await new Promise<void>((r) => stderrFile.end(r));
    await finishTurn(host, entry, turn, { exitCode: code, signal, error: null });
  })();
  return turn;
}

/** Stops a running turn's process group and waits for the turn to be recorded `as` it says. */
export async function stopTurn(turn: Turn, as: 'killed' | 'steered', graceMs: number): Promise<void> {
  if (turn.status !== 'running') return;
  turn.stopping ??= as;
  if (turn.pgid !== null) await stopGroup(turn.pgid, graceMs);
  await turn.ended;
}

/** Records how the turn ended — done.json first, then the state — and wakes its followers. */
async function finishTurn(host: TurnHost, entry: Session, turn: Turn, end: { exitCode: number | null; signal: string | null; error: string | null }): Promise<void> {
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
    endedAt: new Date().toISOString(),
  };
  try {
    await host.store.writeDone(entry.record.session, done);
  } catch {
    // The directory was reaped meanwhile (session_kill of a finished session cannot race this,
    // but a person deleting .ai/local can): the turn still ends in memory.
  }
  turn.done = done;
  turn.status = done.status;
  for (const listener of turn.listeners) listener();
  host.turnEnded(entry.record.session, turn.turn);
}
