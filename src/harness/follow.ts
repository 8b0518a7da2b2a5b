/**
 * Reading a session's files: its transcripts from a position (a turn and a byte offset, what a
 * cursor encodes), on across its turns, and followed as they grow; and the tail of its stderr.
 * A follower is woken by the turns' listeners, never by polling.
 */
import { readFile } from 'node:fs/promises';
import type { CallContext } from '../platform/call.js';
import { latestTurn, STDERR_TAIL, type Session, type Turn } from './session.js';
import type { SessionStore } from './store.js';
import { readTranscript } from './transcript.js';

/** A read answers at most this much transcript (whole lines; one longer line is cut). */
export const READ_CAP_BYTES = 60_000;

/** Where a reader is: a turn and a byte offset into its transcript. */
export interface Position {
  t: number;
  o: number;
}

/** Why a follow returned. */
export type FollowEnd = 'ended' | 'cancelled' | 'deadline' | 'full';

/** Reads from `position` up to `maxBytes`, moving on to the next turn once one is read whole. */
export async function readFrom(store: SessionStore, entry: Session, position: Position, maxBytes: number): Promise<{ lines: string[]; position: Position }> {
  const lines: string[] = [];
  let at = { ...position };
  let budget = maxBytes;
  for (;;) {
    const path = store.transcriptPath(entry.record.session, at.t);
    const read = await readTranscript(path, { offset: at.o, maxBytes: budget });
    lines.push(...read.lines);
    budget -= read.next - at.o;
    at = { t: at.t, o: read.next };
    const turn = entry.turns.find((t) => t.turn === at.t);
    const later = entry.turns.find((t) => t.turn > at.t);
    if (budget <= 0 || turn?.status === 'running' || later === undefined) return { lines, position: at };
    if (at.o < (await store.transcriptSize(entry.record.session, at.t))) return { lines, position: at };
    at = { t: later.turn, o: 0 };
  }
}

/** Whether `position` is the end of the session: its latest turn ended and was read whole. */
export async function allRead(store: SessionStore, entry: Session, position: Position): Promise<boolean> {
  const last = latestTurn(entry);
  if (last.status === 'running' || position.t !== last.turn) return false;
  return position.o >= (await store.transcriptSize(entry.record.session, last.turn));
}

/**
 * Streams each new line from `start` as progress until the turn at the end of the session ends,
 * the caller cancels, the deadline passes, or `maxBytes` were gathered (the result then holds
 * exactly what was streamed, and the cursor goes on from there: nothing lost, nothing twice).
 * With no byte limit the lines are only streamed, not kept.
 */
export async function follow(
  store: SessionStore,
  entry: Session,
  start: Position,
  call: CallContext,
  deadline: number,
  maxBytes = READ_CAP_BYTES,
): Promise<{ lines: string[]; position: Position; why: FollowEnd }> {
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
      const read = await readFrom(store, entry, position, maxBytes === Number.POSITIVE_INFINITY ? READ_CAP_BYTES : maxBytes - gathered);
      position = read.position;
      for (const line of read.lines) {
        gathered += Buffer.byteLength(line) + 1;
        if (maxBytes !== Number.POSITIVE_INFINITY) lines.push(line);
        call.onProgress?.(line);
      }
      if (call.signal?.aborted) return { lines, position, why: 'cancelled' };
      if (gathered >= maxBytes) return { lines, position, why: 'full' };
      if (read.lines.length > 0) continue;
      if (await allRead(store, entry, position)) return { lines, position, why: 'ended' };
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

/** The last `limit` characters of a turn's stderr (the latest's by default): from memory while it runs, else its file. */
export async function stderrTail(store: SessionStore, entry: Session, limit = STDERR_TAIL, turn: Turn = latestTurn(entry)): Promise<string> {
  const last = turn;
  if (last.status === 'running' && limit <= STDERR_TAIL) return last.stderrTail.slice(-limit);
  const text = await readFile(store.stderrPath(entry.record.session, last.turn), 'utf8').catch(() => '');
  return text.slice(-limit);
}
