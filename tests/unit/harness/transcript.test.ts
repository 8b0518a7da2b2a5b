/**
 * Transcript I/O, and the ways hyprpilot's went wrong:
 * - the writer turns stdout chunks into `{at, kind, text?, event}` lines, decoding whole lines only
 *   (a character split across chunks arrives whole), holding an unfinished line until its newline
 *   or end(), feeding the parser each line and telling followers;
 * - a stdout line over MAX_EVENT_BYTES becomes a truncated entry (head cut on a UTF-8 boundary)
 *   without the parser seeing it, with memory bounded while it arrives;
 * - a failed write stops the transcript but not the parsing;
 * - reads return whole lines of at most maxBytes, hold back a line still being written and read it
 *   whole later, cut an over-long line on a UTF-8 boundary and move past it, and refuse an offset
 *   that is not a line start; tailLines answers the last lines and where to go on from;
 * - cursors round-trip, and anything else is refused as malformed.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_READ_BYTES,
  MALFORMED_CURSOR,
  MAX_EVENT_BYTES,
  TRUNCATED_HEAD_BYTES,
  TranscriptWriter,
  cutUtf8,
  decodeCursor,
  encodeCursor,
  readTranscript,
  tailLines,
} from '../../../src/harness/transcript.js';
import { HarnessRefusal } from '../../../src/harness/types.js';
import { adapterFor } from '../../../src/harness/vendors/index.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'majordomus-transcript-'));
  file = join(dir, 'transcript.jsonl');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Line {
  at: string;
  kind: string;
  text?: string;
  event: unknown;
}

function linesOf(path: string): Line[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

function writer(onEntry?: (line: string) => void) {
  const parser = adapterFor('executor').turnParser();
  return { parser, writer: new TranscriptWriter({ path: file, parser, ...(onEntry === undefined ? {} : { onEntry }) }) };
}

const json = (value: unknown): string => JSON.stringify(value);

describe('TranscriptWriter', () => {
  it('writes one line per stdout line (at, kind, text, event), feeds the parser and tells followers', async () => {
    const seen: string[] = [];
    const { parser, writer: w } = writer((line) => seen.push(line));
    w.push(Buffer.from(`${json({ type: 'session', id: 's-1' })}\nnot json\n${json({ type: 'result', status: 'completed', answer: 'ok' })}\n`));
    await w.end();
    const lines = linesOf(file);
    expect(lines.map((l) => [l.kind, l.text, l.event])).toEqual([
      ['system', 'session started', { type: 'session', id: 's-1' }],
      ['text', 'not json', 'not json'],
      ['result', 'ok', { type: 'result', status: 'completed', answer: 'ok' }],
    ]);
    for (const line of lines) expect(Number.isNaN(Date.parse(line.at))).toBe(false);
    expect(seen).toEqual(readFileSync(file, 'utf8').split('\n').filter((l) => l !== ''));
    expect(parser.vendorId).toBe('s-1');
    expect(parser.answer).toBe('ok');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
  });

  it('decodes a multi-byte character split across two chunks whole', async () => {
    const { parser, writer: w } = writer();
    const bytes = Buffer.from(`${json({ type: 'message', role: 'assistant', text: 'héllo 😀 wörld' })}\n`);
    const emoji = bytes.indexOf(Buffer.from('😀'));
    w.push(bytes.subarray(0, emoji + 2)); // two of the emoji's four bytes
    expect(linesOf(file)).toEqual([]);
    w.push(bytes.subarray(emoji + 2));
    await w.end();
    expect(linesOf(file)[0]?.text).toBe('héllo 😀 wörld');
    expect(parser.answer).toBe('héllo 😀 wörld');
  });

  it('holds a line until its newline comes, and end() writes a last line that has none', async () => {
    const { parser, writer: w } = writer();
    w.push(Buffer.from('{"type":"ses'));
    w.push(Buffer.from('sion","id":"s-2"}'));
    expect(linesOf(file)).toEqual([]);
    w.push(Buffer.from('\r\n\n   \n{"type":"result","status":"completed","answer":"tail"}'));
    expect(linesOf(file).map((l) => l.kind)).toEqual(['system']);
    await w.end();
    await w.end();
    w.push(Buffer.from('{"type":"message","role":"assistant","text":"after end"}\n'));
    expect(linesOf(file).map((l) => l.kind)).toEqual(['system', 'result']);
    expect(parser.vendorId).toBe('s-2');
    expect(parser.answer).toBe('tail');
  });

  it('turns a stdout line over MAX_EVENT_BYTES into a truncated entry without feeding the parser', async () => {
    const { parser, writer: w } = writer();
    // A session event the parser would take its id from, padded with 2-byte characters so that a
    // character straddles the head's cap; it arrives in 4 KiB chunks.
    const prefix = '{"type":"session","id":"must-not-be-seen","pad":"';
    const line = Buffer.from(`${prefix}${'é'.repeat(MAX_EVENT_BYTES / 2)}"}\n`);
    expect((TRUNCATED_HEAD_BYTES - Buffer.byteLength(prefix)) % 2).toBe(1);
    for (let at = 0; at < line.length; at += 4096) w.push(line.subarray(at, at + 4096));
    w.push(Buffer.from(`${json({ type: 'message', role: 'assistant', text: 'next' })}\n`));
    await w.end();
    const [truncated, next] = linesOf(file);
    const event = truncated?.event as { truncated: boolean; bytes: number; head: string };
    expect(truncated?.kind).toBe('other');
    expect(event.truncated).toBe(true);
    expect(event.bytes).toBe(line.length - 1);
    const head = Buffer.from(event.head);
    expect(head.length).toBe(TRUNCATED_HEAD_BYTES - 1); // the straddling character left out whole
    expect(event.head.startsWith(prefix)).toBe(true);
    expect(event.head.endsWith('é')).toBe(true);
    expect(event.head.includes('\uFFFD')).toBe(false);
    expect(truncated?.text).toBe(`a stdout line of ${line.length - 1} bytes, kept as its first ${TRUNCATED_HEAD_BYTES - 1}`);
    expect(parser.vendorId).toBeNull();
    expect(next?.text).toBe('next');
    expect(parser.answer).toBe('next');
  });

  it('parses a line of exactly MAX_EVENT_BYTES, and truncates one byte more even when it ends the output', async () => {
    const { parser, writer: w } = writer();
    const frame = json({ type: 'session', id: 'fits', pad: '' });
    const fits = frame.replace('"pad":""', `"pad":"${'x'.repeat(MAX_EVENT_BYTES - frame.length)}"`);
    expect(Buffer.byteLength(fits)).toBe(MAX_EVENT_BYTES);
    w.push(Buffer.from(`${fits}\n`));
    w.push(Buffer.from(`${fits} `)); // no newline: end() completes it
    await w.end();
    const lines = linesOf(file);
    expect(lines.map((l) => l.kind)).toEqual(['system', 'other']);
    expect(lines[1]?.event).toMatchObject({ truncated: true, bytes: MAX_EVENT_BYTES + 1 });
    expect(parser.vendorId).toBe('fits');
  });

  it('stops the transcript at a failed write but goes on parsing and telling followers', async () => {
    if (!existsSync('/dev/full')) throw new Error('this test needs /dev/full (Linux)');
    const parser = adapterFor('executor').turnParser();
    const seen: string[] = [];
    const w = new TranscriptWriter({ path: '/dev/full', parser, onEntry: (line) => seen.push(line) });
    w.push(Buffer.from(`${json({ type: 'session', id: 's-3' })}\n${json({ type: 'result', status: 'completed', answer: 'kept' })}\n`));
    await w.end();
    expect((w.failure as NodeJS.ErrnoException | null)?.code).toBe('ENOSPC');
    expect(parser.answer).toBe('kept');
    expect(seen).toHaveLength(2);
  });
});

describe('readTranscript', () => {
  it('returns whole lines; a line written in two appends is held back, then read whole', async () => {
    writeFileSync(file, 'one\ntwo\npar');
    const first = await readTranscript(file, { offset: 0 });
    expect(first).toEqual({ lines: ['one', 'two'], next: 8 });
    expect(await readTranscript(file, { offset: first.next })).toEqual({ lines: [], next: 8 });
    appendFileSync(file, 'tial\nthree\n');
    expect(await readTranscript(file, { offset: first.next })).toEqual({ lines: ['partial', 'three'], next: 22 });
    expect(await readTranscript(file, { offset: 22 })).toEqual({ lines: [], next: 22 });
  });

  it('caps a read at about 60 KB of whole lines, and reading on yields every line once, in order', async () => {
    const all = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}${'é'.repeat(499)}`); // 1001 bytes a line with its newline
    writeFileSync(file, all.map((l) => `${l}\n`).join(''));
    const first = await readTranscript(file, { offset: 0 });
    expect(first.lines).toHaveLength(Math.floor((DEFAULT_READ_BYTES + 1) / 1002));
    expect(first.lines).toEqual(all.slice(0, first.lines.length));
    const got = [...first.lines];
    for (let at = first.next, reads = 0; reads < 10; reads += 1) {
      const read = await readTranscript(file, { offset: at });
      got.push(...read.lines);
      at = read.next;
      if (read.lines.length === 0) break;
    }
    expect(got).toEqual(all);
  });

  it('cuts a 5 MB line on a UTF-8 boundary, says how much was cut, and moves past it', async () => {
    const long = `x${'€'.repeat((5 * 1024 * 1024) / 3)}`; // 3-byte characters from offset 1: 60000 falls inside one
    writeFileSync(file, `${long}\nafter\n`);
    const read = await readTranscript(file, { offset: 0, maxBytes: 60_000 });
    expect(read.lines).toHaveLength(1);
    const [line] = read.lines as [string];
    const match = /^(.*)…\[cut (\d+) bytes\]$/s.exec(line);
    expect(match).not.toBeNull();
    const kept = match?.[1] as string;
    expect(Buffer.byteLength(kept)).toBe(59_998);
    expect(kept.includes('\uFFFD')).toBe(false);
    expect(Buffer.byteLength(kept) + Number(match?.[2])).toBe(Buffer.byteLength(long));
    expect(read.next).toBe(Buffer.byteLength(long) + 1);
    expect(await readTranscript(file, { offset: read.next })).toEqual({ lines: ['after'], next: read.next + 6 });
  });

  it('holds back an over-long line that has no newline yet', async () => {
    writeFileSync(file, `ok\n${'y'.repeat(200)}`);
    expect(await readTranscript(file, { offset: 0, maxBytes: 50 })).toEqual({ lines: ['ok'], next: 3 });
    expect(await readTranscript(file, { offset: 3, maxBytes: 50 })).toEqual({ lines: [], next: 3 });
    appendFileSync(file, '\n');
    expect(await readTranscript(file, { offset: 3, maxBytes: 50 })).toEqual({ lines: [`${'y'.repeat(50)}…[cut 150 bytes]`], next: 204 });
  });

  it('refuses an offset inside a line, past the end, or into a missing file as a malformed cursor', async () => {
    writeFileSync(file, 'one\ntwo\n');
    for (const offset of [2, 9, -1, 1.5]) {
      await expect(readTranscript(file, { offset })).rejects.toThrow(MALFORMED_CURSOR);
    }
    await expect(readTranscript(file, { offset: 2 })).rejects.toBeInstanceOf(HarnessRefusal);
    expect(await readTranscript(join(dir, 'missing.jsonl'), { offset: 0 })).toEqual({ lines: [], next: 0 });
    await expect(readTranscript(join(dir, 'missing.jsonl'), { offset: 4 })).rejects.toThrow(MALFORMED_CURSOR);
  });
});

describe('tailLines', () => {
  it('answers the last n whole lines and the offset after them, leaving a partial line for later', async () => {
    writeFileSync(file, 'a\nb\nc\nd\npart');
    expect(await tailLines(file, 2)).toEqual({ lines: ['c', 'd'], next: 8 });
    expect(await tailLines(file, 10)).toEqual({ lines: ['a', 'b', 'c', 'd'], next: 8 });
    expect(await tailLines(file, 0)).toEqual({ lines: [], next: 8 });
    appendFileSync(file, 'ial\n');
    expect(await readTranscript(file, { offset: 8 })).toEqual({ lines: ['partial'], next: 16 });
  });

  it('keeps to maxBytes, dropping a line the window starts inside, and cuts a last line longer than that', async () => {
    writeFileSync(file, `${'a'.repeat(30)}\n${'b'.repeat(30)}\n${'c'.repeat(30)}\n`);
    expect(await tailLines(file, 3, { maxBytes: 70 })).toEqual({ lines: ['b'.repeat(30), 'c'.repeat(30)], next: 93 });
    appendFileSync(file, `${'ü'.repeat(100)}\n`);
    expect(await tailLines(file, 3, { maxBytes: 51 })).toEqual({ lines: [`${'ü'.repeat(25)}…[cut 150 bytes]`], next: 294 });
  });

  it('answers nothing for an empty, a missing, or a newline-less file', async () => {
    expect(await tailLines(join(dir, 'missing.jsonl'), 5)).toEqual({ lines: [], next: 0 });
    writeFileSync(file, '');
    expect(await tailLines(file, 5)).toEqual({ lines: [], next: 0 });
    writeFileSync(file, 'no newline yet');
    expect(await tailLines(file, 5)).toEqual({ lines: [], next: 0 });
  });
});

describe('cursors', () => {
  it('round-trips a position through an opaque base64url string', () => {
    const cursor = encodeCursor({ t: 3, o: 12_345 });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual({ t: 3, o: 12_345 });
    expect(decodeCursor(cursor)).toEqual({ t: 3, o: 12_345 });
  });

  it('refuses anything encodeCursor did not make', () => {
    const b64 = (text: string): string => Buffer.from(text).toString('base64url');
    const canonical = encodeCursor({ t: 1, o: 0 });
    // Same bytes, other spelling: the last character's unused low bits set.
    const last = canonical.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = `${canonical.slice(0, -1)}${alphabet[alphabet.indexOf(last) + 1]}`;
    expect(Buffer.from(respelled, 'base64url').equals(Buffer.from(canonical, 'base64url'))).toBe(true);
    const bad = [
      '',
      'not a cursor!',
      'A'.repeat(201),
      b64('not json'),
      b64('[1,2]'),
      b64('null'),
      b64('{"t":0,"o":0}'),
      b64('{"t":1,"o":-1}'),
      b64('{"t":1.5,"o":0}'),
      b64('{"t":"1","o":0}'),
      b64('{"t":1}'),
      b64('{"t":1,"o":0,"x":1}'),
      b64('{"o":0,"t":1}'),
      `${canonical}=`,
      respelled,
    ];
    for (const cursor of bad) {
      expect(() => decodeCursor(cursor), cursor).toThrow(MALFORMED_CURSOR);
    }
    try {
      decodeCursor('garbage!');
    } catch (error) {
      expect(error).toBeInstanceOf(HarnessRefusal);
      expect((error as HarnessRefusal).code).toBe('refused');
    }
  });
});

describe('cutUtf8', () => {
  it('keeps the longest prefix that ends between characters', () => {
    const bytes = Buffer.from('a€b'); // 61 e2 82 ac 62
    expect(cutUtf8(bytes, 10).toString()).toBe('a€b');
    expect(cutUtf8(bytes, 4).toString()).toBe('a€');
    expect(cutUtf8(bytes, 3).toString()).toBe('a');
    expect(cutUtf8(bytes, 2).toString()).toBe('a');
    expect(cutUtf8(bytes, 1).toString()).toBe('a');
    expect(cutUtf8(bytes, 0).toString()).toBe('');
  });
});
