/**
 * A turn's transcript file: the agent's stdout turned into one JSON line per stdout line
 * (`{at, kind, text?, event}`), and reads of it by byte offset.
 *
 * What this guards against (hyprpilot had each of these): a line is decoded only once it is whole,
 * so a UTF-8 sequence split across two chunks is never mangled; a reader gets whole lines only and
 * a line still being written waits for the next read, so a follower never loses a prefix; a read
 * always moves on, past a line longer than it may return too (cut on a UTF-8 boundary), so a cursor
 * never stalls; and a runaway stdout line is cut at MAX_EVENT_BYTES while it arrives, so memory
 * stays bounded.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { HarnessRefusal } from './types.js';
import type { TranscriptEntry, TurnParser } from './vendors/adapter.js';

/** A stdout line longer than this is not parsed: its entry keeps a head and the size. */
export const MAX_EVENT_BYTES = 1024 * 1024;
/** How much of an over-long stdout line its entry keeps. */
export const TRUNCATED_HEAD_BYTES = 64 * 1024;
/** The most a read returns when the caller names no cap (whole lines; one longer line is cut). */
export const DEFAULT_READ_BYTES = 60_000;
export const MALFORMED_CURSOR = 'malformed cursor: pass nextCursor as it was given, or omit it';

const NEWLINE = 0x0a;
const SCAN_CHUNK = 64 * 1024;

/** The longest prefix of `bytes` of at most `max` bytes that ends between two UTF-8 characters. */
export function cutUtf8(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  let end = Math.max(0, max);
  // A continuation byte (10xxxxxx) at `end` means a character straddles the cut: step back to its lead.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end);
}

export interface TranscriptWriterOptions {
  /** The transcript file; opened for appending (created 0600) and owned by the writer. */
  path: string;
  /** Fed every whole stdout line that fits MAX_EVENT_BYTES. */
  parser: TurnParser;
  /** Called with each transcript line (no newline) once it is in the file. */
  onEntry?: (line: string) => void;
}

/**
 * Turns a child's stdout chunks into transcript lines: splits on newlines (a newline byte never
 * occurs inside a UTF-8 sequence), decodes whole lines only, feeds the parser, appends each entry
 * with one synchronous write so the file's order is the order of stdout.
 */
export class TranscriptWriter {
  #fd: number | null;
  #parser: TurnParser;
  #onEntry: ((line: string) => void) | undefined;
  /** The unfinished line, in pieces. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Set once the unfinished line passed MAX_EVENT_BYTES: its head and how long it is so far. */
  #overflow: { head: Buffer; bytes: number } | null = null;
  #failure: Error | null = null;
  #ended = false;

  constructor(options: TranscriptWriterOptions) {
    this.#fd = openSync(options.path, 'a', 0o600);
    this.#parser = options.parser;
    this.#onEntry = options.onEntry;
  }

  /** The first write that failed (the transcript stops there; parsing goes on), or null. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** One chunk of stdout, as it came. */
  push(chunk: Buffer): void {
    if (this.#ended) return;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.#complete(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
  }

  /** Writes a last line that had no newline and closes the file. Safe to call twice. */
  async end(): Promise<void> {
    if (this.#ended) return;
    if (this.#pendingBytes > 0 || this.#overflow !== null) this.#complete(Buffer.alloc(0));
    this.#ended = true;
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  #hold(piece: Buffer): void {
    if (this.#overflow !== null) {
      this.#overflow.bytes += piece.length;
      return;
    }
    if (this.#pendingBytes + piece.length > MAX_EVENT_BYTES) {
      this.#overflow = { head: headOf([...this.#pending, piece]), bytes: this.#pendingBytes + piece.length };
      this.#pending = [];
      this.#pendingBytes = 0;
      return;
    }
    // A copy: the chunk's memory is not ours to keep past this call.
    this.#pending.push(Buffer.from(piece));
    this.#pendingBytes += piece.length;
  }

  /** The current line ends with `last`. */
  #complete(last: Buffer): void {
    const overflow = this.#overflow;
    const pieces = [...this.#pending, last];
    const bytes = (overflow?.bytes ?? this.#pendingBytes) + last.length;
    this.#overflow = null;
    this.#pending = [];
    this.#pendingBytes = 0;
    if (overflow !== null || bytes > MAX_EVENT_BYTES) {
      const head = overflow?.head ?? headOf(pieces);
      this.#record({
        kind: 'other',
        text: `a stdout line of ${bytes} bytes, kept as its first ${head.length}`,
        event: { truncated: true, bytes, head: head.toString('utf8') },
      });
      return;
    }
    let text = Buffer.concat(pieces, bytes).toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    this.#record(this.#parser.line(text));
  }

  #record(entry: TranscriptEntry): void {
    const line = JSON.stringify({ at: new Date().toISOString(), kind: entry.kind, ...(entry.text === undefined ? {} : { text: entry.text }), event: entry.event });
    this.#append(Buffer.from(`${line}\n`));
    this.#onEntry?.(line);
  }

  #append(bytes: Buffer): void {
    if (this.#fd === null) return;
    try {
      // One write per line; the loop only finishes a rare short write.
      for (let done = 0; done < bytes.length; ) done += writeSync(this.#fd, bytes, done);
    } catch (error) {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      closeSync(this.#fd);
      this.#fd = null;
    }
  }
}

/** The first TRUNCATED_HEAD_BYTES of the pieces, cut on a UTF-8 boundary. */
function headOf(pieces: readonly Buffer[]): Buffer {
  const taken: Buffer[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (bytes >= TRUNCATED_HEAD_BYTES + 4) break;
    const part = piece.subarray(0, TRUNCATED_HEAD_BYTES + 4 - bytes);
    taken.push(part);
    bytes += part.length;
  }
  // Four bytes past the cap let cutUtf8 see whether a character straddles it.
  return cutUtf8(Buffer.concat(taken, bytes), TRUNCATED_HEAD_BYTES);
}

export interface TranscriptRead {
  /** Whole lines, without their newlines. */
  lines: string[];
  /** The offset the next read starts at. */
  next: number;
}

/**
 * Whole lines from `offset`, at most about `maxBytes` of them. A trailing line without its
 * newline is held back (`next` stays before it); a line longer than `maxBytes` comes cut on a
 * UTF-8 boundary with `…[cut N bytes]` appended, and `next` moves past it. An offset that is not
 * the start of a line of this file is refused as a malformed cursor.
 */
export async function readTranscript(path: string, options: { offset: number; maxBytes?: number }): Promise<TranscriptRead> {
  const { offset } = options;
  const maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_READ_BYTES);
  const handle = await openIfExists(path);
  if (handle === null) {
    if (offset !== 0) throw new HarnessRefusal(MALFORMED_CURSOR);
    return { lines: [], next: 0 };
  }
  try {
    const size = (await handle.stat()).size;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > size) throw new HarnessRefusal(MALFORMED_CURSOR);
    if (offset > 0 && (await readAt(handle, offset - 1, 1))[0] !== NEWLINE) throw new HarnessRefusal(MALFORMED_CURSOR);
    if (offset === size) return { lines: [], next: offset };
    // One byte past the cap: a newline there still closes a line that fits, and cutUtf8 can see it.
    const window = await readAt(handle, offset, Math.min(maxBytes + 1, size - offset));
    const last = window.lastIndexOf(NEWLINE);
    if (last !== -1) return { lines: splitLines(window.subarray(0, last)), next: offset + last + 1 };
    // No newline within maxBytes: a line still being written, or one longer than maxBytes.
    if (size - offset <= maxBytes) return { lines: [], next: offset };
    const end = await nextNewline(handle, offset + window.length, size);
    if (end === -1) return { lines: [], next: offset };
    return { lines: [cutLine(window, maxBytes, end - offset)], next: end + 1 };
  } finally {
    await handle.close();
  }
}

/**
 * The last `count` whole lines (at most about `maxBytes` of them; a last line longer than that
 * comes cut), and the offset just after them, where a cursor read goes on.
 */
export async function tailLines(path: string, count: number, options: { maxBytes?: number } = {}): Promise<TranscriptRead> {
  const maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_READ_BYTES);
  const handle = await openIfExists(path);
  if (handle === null) return { lines: [], next: 0 };
  try {
    const size = (await handle.stat()).size;
    const end = (await previousNewline(handle, size)) + 1; // after the last whole line; 0 if none
    if (end === 0 || count <= 0) return { lines: [], next: end };
    const lastStart = (await previousNewline(handle, end - 1)) + 1;
    if (end - 1 - lastStart > maxBytes) {
      const head = await readAt(handle, lastStart, maxBytes + 4);
      return { lines: [cutLine(head, maxBytes, end - 1 - lastStart)], next: end };
    }
    const start = Math.max(0, end - 1 - maxBytes);
    let region = await readAt(handle, start, end - 1 - start);
    if (start > 0 && (await readAt(handle, start - 1, 1))[0] !== NEWLINE) {
      // The window begins inside a line: drop that part line.
      region = region.subarray(region.indexOf(NEWLINE) + 1);
    }
    return { lines: splitLines(region).slice(-count), next: end };
  } finally {
    await handle.close();
  }
}

/** A read position: turn and byte offset in that turn's transcript. */
export interface TranscriptPosition {
  t: number;
  o: number;
}

/** The opaque cursor of a position: base64url of `{"t":turn,"o":offset}`. */
export function encodeCursor(position: TranscriptPosition): string {
  return Buffer.from(JSON.stringify({ t: position.t, o: position.o })).toString('base64url');
}

/** The position a cursor names; anything encodeCursor did not make is refused. */
export function decodeCursor(cursor: string): TranscriptPosition {
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new HarnessRefusal(MALFORMED_CURSOR);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new HarnessRefusal(MALFORMED_CURSOR);
  }
  if (typeof value !== 'object' || value === null) throw new HarnessRefusal(MALFORMED_CURSOR);
  const { t, o } = value as Record<string, unknown>;
  if (typeof t !== 'number' || typeof o !== 'number' || !Number.isSafeInteger(t) || t < 1 || !Number.isSafeInteger(o) || o < 0) throw new HarnessRefusal(MALFORMED_CURSOR);
  const position = { t, o };
  // Only the canonical spelling: no extra keys, no alternative encodings of the same bytes.
  if (encodeCursor(position) !== cursor) throw new HarnessRefusal(MALFORMED_CURSOR);
  return position;
}

function splitLines(bytes: Buffer): string[] {
  return bytes
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
}

/** The first `maxBytes` of a line of `lineBytes`, cut on a UTF-8 boundary, saying how much was cut. */
function cutLine(head: Buffer, maxBytes: number, lineBytes: number): string {
  const kept = cutUtf8(head, maxBytes);
  return `${kept.toString('utf8')}…[cut ${lineBytes - kept.length} bytes]`;
}

async function openIfExists(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** The offset of the first newline at or after `from`, or -1. */
async function nextNewline(handle: FileHandle, from: number, size: number): Promise<number> {
  for (let at = from; at < size; at += SCAN_CHUNK) {
    const chunk = await readAt(handle, at, Math.min(SCAN_CHUNK, size - at));
    const found = chunk.indexOf(NEWLINE);
    if (found !== -1) return at + found;
  }
  return -1;
}

/** The offset of the last newline before `before`, or -1. */
async function previousNewline(handle: FileHandle, before: number): Promise<number> {
  for (let end = before; end > 0; end -= SCAN_CHUNK) {
    const start = Math.max(0, end - SCAN_CHUNK);
    const chunk = await readAt(handle, start, end - start);
    const found = chunk.lastIndexOf(NEWLINE);
    if (found !== -1) return start + found;
  }
  return -1;
}
