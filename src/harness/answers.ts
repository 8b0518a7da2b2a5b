/**
 * What a caller is answered about a session: a spawn's or a send's answer (after following the
 * turn when it asked to wait), a session_read (a tail, a cursor, or a follow), and the session's
 * resources. Texts are capped here; the transcript's own bounds are follow.ts's.
 */
import type { CallContext } from '../platform/call.js';
import { allRead, follow, readFrom, READ_CAP_BYTES, stderrTail, type Position } from './follow.js';
import type { LaunchInput } from './launching.js';
import type { ResourcePart } from './resource-uris.js';
import type { LaunchAnswer, ReadAnswer, ResourceAnswer } from './schemas.js';
import { latestTurn, launchSettings, type Session, type Turn } from './session.js';
import type { SessionTable } from './session-table.js';
import type { TurnDone } from './store.js';
import { decodeCursor, encodeCursor, readTranscript, tailLines } from './transcript.js';
import { HarnessRefusal } from './types.js';

/** `text` of a result is capped at this many characters. */
const TEXT_CAP = 4_000;
/**
 * How long `wait` waits unless told: under the 60 s at which opencode and Copilot CLI abandon a
 * tool call (hyprpilot chose 45 s for the same reason); the turn goes on after it.
 */
export const DEFAULT_WAIT_SECONDS = 45;

export interface ReadInput {
  session: string;
  tail?: number;
  cursor?: string;
  wait?: boolean;
  timeout_seconds?: number;
}

export type { ResourcePart } from './resource-uris.js';

/** A spawn's or a send's answer for `turn`: followed to its end first when the caller waits. */
export async function launchAnswer(table: SessionTable, entry: Session, turn: Turn, input: LaunchInput, call: CallContext): Promise<LaunchAnswer> {
  let timedOut = false;
  let position: Position = { t: turn.turn, o: 0 };
  if (input.wait) {
    const followed = await follow(table.store, entry, position, call, deadlineOf(input.timeout_seconds), Number.POSITIVE_INFINITY);
    position = followed.position;
    timedOut = followed.why === 'deadline';
  }
  const { record } = entry;
  const running = turn.status === 'running';
  const answer = turn.done?.answer ?? null;
  const finished = await allRead(table.store, entry, position);
  return {
    session: record.session,
    profile: record.profile,
    agent: record.agent,
    status: running ? ('running' as const) : ('exited' as const),
    turn: turn.turn,
    ...(turn.done?.exitCode === null || turn.done === null ? {} : { exitCode: turn.done.exitCode }),
    ...(input.wait ? { timedOut } : {}),
    sessionInfo: sessionInfo(table, entry, turn),
    text: running ? `session ${record.session} is running turn ${turn.turn}; follow it with session_read (wait: true)` : cap(resultText(turn)),
    ...(finished ? {} : { nextCursor: encodeCursor(position) }),
    ...(answer === null ? {} : { answer: cap(answer, 64 * 1024) }),
  };
}

/** session_read: the latest turn's tail, or on from a cursor; with `wait`, followed as it grows. */
export async function readSession(table: SessionTable, input: ReadInput, call: CallContext): Promise<ReadAnswer> {
  const entry = table.get(input.session);
  const id = entry.record.session;
  let position: Position;
  let lines: string[] = [];
  if (input.cursor !== undefined) {
    position = decodeCursor(input.cursor);
    if (!entry.turns.some((t) => t.turn === position.t)) throw new HarnessRefusal('malformed cursor: pass nextCursor as it was given, or omit it');
  } else {
    const last = latestTurn(entry);
    const tail = await tailLines(table.store.transcriptPath(id, last.turn), input.tail ?? 200);
    lines = input.wait ? [] : tail.lines;
    position = { t: last.turn, o: tail.next };
  }
  if (input.wait) {
    const followed = await follow(table.store, entry, position, call, deadlineOf(input.timeout_seconds));
    lines = followed.lines;
    position = followed.position;
  } else if (input.cursor !== undefined) {
    const read = await readFrom(table.store, entry, position, READ_CAP_BYTES);
    lines = read.lines;
    position = read.position;
  }
  const finished = await allRead(table.store, entry, position);
  const stderr = await stderrTail(table.store, entry);
  return {
    session: id,
    lines,
    ...(finished ? {} : { nextCursor: encodeCursor(position) }),
    ...(stderr === '' ? {} : { stderr }),
  };
}

/** A session resource: its status, its answer, its transcript or its stderr, of its latest turn or of `turn`. */
export async function sessionResource(table: SessionTable, input: { session: string; part: ResourcePart; turn?: number }): Promise<ResourceAnswer> {
  const entry = table.get(input.session);
  const turn = input.turn === undefined ? latestTurn(entry) : entry.turns.find((t) => t.turn === input.turn);
  // A turn the session never reached is an error, never the latest one read instead.
  if (turn === undefined) throw new HarnessRefusal(`session ${input.session} has no turn ${input.turn}; it has turns 1 to ${entry.turns.length}`, 'not_found');
  switch (input.part) {
    case 'status':
      return { text: JSON.stringify(await table.status({ session: input.session, turn: turn.turn })), mimeType: 'application/json' };
    case 'result':
      return { text: resultText(turn), mimeType: 'text/plain' };
    case 'transcript': {
      const read = await readTranscript(table.store.transcriptPath(input.session, turn.turn), { offset: 0, maxBytes: 1024 * 1024 });
      return { text: read.lines.map((line: string) => `${line}\n`).join(''), mimeType: 'application/jsonl' };
    }
    case 'stderr':
      return { text: await stderrTail(table.store, entry, 64 * 1024, turn), mimeType: 'text/plain' };
  }
}

/** What the turn was started with and where its files are (paths relative to the checkout). */
function sessionInfo(table: SessionTable, entry: Session, turn: Turn): LaunchAnswer['sessionInfo'] {
  const { record } = entry;
  return {
    profile: record.profile,
    agent: record.agent,
    ...launchSettings(record.launch),
    cwd: record.launch.cwd === '' ? '.' : record.launch.cwd,
    startedAt: record.createdAt,
    turnStartedAt: turn.startedAt,
    pid: turn.pid,
    files: table.store.turnFiles(table.root, record.session, turn.turn),
    argv: entry.argv,
    env: entry.envNames,
    promptBytes: turn.promptBytes,
  };
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

function cap(text: string, limit = TEXT_CAP): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…[${text.length - limit} more characters]`;
}

function deadlineOf(seconds: number | undefined): number {
  return Date.now() + (seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
}
