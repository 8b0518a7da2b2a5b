/**
 * The history of claims and messages: JSON lines under `<local>/coordination/`, appended as things
 * happen, so a successor restores the state after a takeover and a person can read what happened.
 * Each event is written before its caller is answered (one synchronous write of one line to a file
 * kept open for appending): a server killed the moment after it answered has still kept what it
 * answered about. The files are the user's (mode 0600: messages may say anything).
 *
 * A line is also where a message's text lives once it has left memory: `append` answers where the
 * line went, and the readers below fetch lines back by that position. Every read is bounded: the
 * whole file is only ever read in chunks (at start), and a line is read back in spans of at most
 * `READ_SPAN` bytes.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { log } from '../platform/log.js';

/** Where one line of a journal is: its first byte and its length in bytes, without the newline. */
export interface JournalLine {
  offset: number;
  length: number;
}

export type JournalEntry = Record<string, unknown>;

/** Reads lines of a journal back by where `append` put them; a line that is not an entry any more reads as null. */
export interface JournalReader {
  /**
   * The entries of these lines, in order, read before returning: for reads whose size the caller
   * bounds (a limit of messages), so the answer costs about what writing it out costs anyway.
   */
  readSync(lines: readonly JournalLine[]): Array<JournalEntry | null>;
  /**
   * The entries of `items`' lines, in their order, in batches of at most `READ_SPAN` bytes, each
   * read off the thread (none when the file cannot be opened); `items` is consumed as the batches
   * go, so a caller that stops early (it found enough) has read no more than it needed.
   */
  read<T extends { line: JournalLine }>(items: Iterable<T>): AsyncGenerator<Array<[T, JournalEntry | null]>>;
}

/** Bytes read from the file at once when it is read whole (at start). */
const SCAN_CHUNK = 1024 * 1024;
/** A longer line is no entry this server wrote (a message line is below 100 kB): skipped unread. */
const MAX_LINE = 1024 * 1024;
/** The most bytes one read back spans: a few ms of parsing between turns of the event loop. */
export const READ_SPAN = 256 * 1024;
const NEWLINE = 0x0a;

export class Journal implements JournalReader {
  readonly path: string;
  #fd: number | null = null;
  /** Where the next line starts (the file's length as this writer knows it). */
  #size = 0;
  #warned = false;

  constructor(path: string) {
    this.path = path;
  }

  /** Appends one event (an object that serialises to one line); answers where it went, or null when it could not be written. */
  append(entry: object): JournalLine | null {
    try {
      const fd = this.#fd ?? this.#open();
      // Written as a string: a Buffer a line would sit outside the heap until a GC noticed it.
      const line = `${JSON.stringify(entry)}\n`;
      const bytes = Buffer.byteLength(line);
      const offset = this.#size;
      const written = writeSync(fd, line);
      // A short write (a full disk) leaves a cut line: the catch reopens, and #open ends that line.
      if (written !== bytes) throw new Error(`wrote ${written} of ${bytes} bytes`);
      this.#size += bytes;
      return { offset, length: bytes - 1 };
    } catch (error) {
      // Opened again next time, so the position is learnt afresh from the file.
      this.close();
      // The state in memory still serves; only the history is incomplete. Said once, not per event.
      if (!this.#warned) {
        this.#warned = true;
        log.warn(`cannot append to ${this.path}: ${error instanceof Error ? error.message : String(error)}`);
      }
      return null;
    }
  }

  readSync(lines: readonly JournalLine[]): Array<JournalEntry | null> {
    const entries: Array<JournalEntry | null> = lines.map(() => null);
    if (lines.length === 0) return entries;
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return entries;
    }
    try {
      for (const span of spans(lines.map((line, at) => ({ line, at })))) {
        const buffer = Buffer.allocUnsafe(span.end - span.start);
        const read = readSync(fd, buffer, 0, buffer.length, span.start);
        for (const { line, at } of span.items) entries[at] = entryIn(buffer, read, line.offset - span.start, line.length);
      }
    } catch {
      // What was read stands; the rest is null.
    } finally {
      closeSync(fd);
    }
    return entries;
  }

  async *read<T extends { line: JournalLine }>(items: Iterable<T>): AsyncGenerator<Array<[T, JournalEntry | null]>> {
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch {
      return; // no journal (yet): nothing to read back
    }
    try {
      for (const span of spans(items)) {
        const buffer = Buffer.allocUnsafe(span.end - span.start);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, span.start);
        yield span.items.map((item): [T, JournalEntry | null] => [item, entryIn(buffer, bytesRead, item.line.offset - span.start, item.line.length)]);
      }
    } finally {
      // A FileHandle closes once its pending reads are done: a search cut short never reads a reused descriptor.
      await handle.close();
    }
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  #open(): number {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const fd = openSync(this.path, 'a+', 0o600);
    let size = fstatSync(fd).size;
    if (size > 0) {
      // A line cut by a crash would swallow the next one: end it first.
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== NEWLINE) size += writeSync(fd, '\n');
    }
    this.#fd = fd;
    this.#size = size;
    return fd;
  }
}

/** Groups lines, in their order, into reads of at most `READ_SPAN` bytes (a longer line is read alone). */
function* spans<T extends { line: JournalLine }>(items: Iterable<T>): Generator<{ start: number; end: number; items: T[] }> {
  let current: { start: number; end: number; items: T[] } | null = null;
  for (const item of items) {
    const { offset, length } = item.line;
    const end = offset + length;
    if (current !== null && Math.max(current.end, end) - Math.min(current.start, offset) <= READ_SPAN) {
      current.start = Math.min(current.start, offset);
      current.end = Math.max(current.end, end);
      current.items.push(item);
      continue;
    }
    if (current !== null) yield current;
    current = { start: offset, end, items: [item] };
  }
  if (current !== null) yield current;
}

/** The entry on `length` bytes at `at` of what was read, or null when they are not one (the file changed, or was cut). */
function entryIn(buffer: Buffer, read: number, at: number, length: number): JournalEntry | null {
  if (at < 0 || at + length > read) return null;
  return parseEntry(buffer.toString('utf8', at, at + length));
}

function parseEntry(text: string): JournalEntry | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JournalEntry) : null;
  } catch {
    return null; // a line cut by a crash mid-write, or an edit by hand
  }
}

/**
 * Calls `each` with every well-formed line of a journal and where it is, in order; nothing when
 * the file does not exist. The file is read in chunks, so a long journal neither sits in memory
 * whole nor holds the thread for long.
 */
export async function scanJournal(path: string, each: (entry: JournalEntry, line: JournalLine) => void): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return;
  }
  let skipped = 0;
  const take = (text: string, line: JournalLine): void => {
    if (text.trim() === '') return;
    const entry = parseEntry(text);
    if (entry === null) skipped += 1;
    else each(entry, line);
  };
  try {
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    /** The start of a line an earlier chunk began, copied out of the reused chunk. */
    let pending = Buffer.alloc(0);
    let pendingOffset = 0;
    /** Dropping the rest of a line longer than MAX_LINE. */
    let oversized = false;
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      const data = pending.length > 0 ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const dataOffset = pending.length > 0 ? pendingOffset : position;
      position += bytesRead;
      let start = 0;
      for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, start)) {
        if (oversized) {
          oversized = false;
          skipped += 1;
        } else {
          take(data.toString('utf8', start, newline), { offset: dataOffset + start, length: newline - start });
        }
        start = newline + 1;
      }
      const rest = data.length - start;
      oversized ||= rest > MAX_LINE;
      pending = oversized ? Buffer.alloc(0) : Buffer.from(data.subarray(start));
      pendingOffset = dataOffset + start;
    }
    // The last line, without its newline: whole if the writer stopped right there, cut if it crashed.
    if (oversized) skipped += 1;
    else if (pending.length > 0) take(pending.toString('utf8'), { offset: pendingOffset, length: pending.length });
  } finally {
    await handle.close();
  }
  if (skipped > 0) log.warn(`${path}: skipped ${skipped} unreadable line(s)`);
}

/** Every well-formed line of a journal, in order; none when it does not exist. */
export async function readJournal(path: string): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  await scanJournal(path, (entry) => entries.push(entry));
  return entries;
}
