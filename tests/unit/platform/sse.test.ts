/**
 * The bridge's readers of a streamed answer, fed piece by piece (src/platform/sse.ts and the
 * chunked decoder of src/platform/loopback-http.ts). Covers:
 * - every `message` event (named or not) is handed on as soon as its closing blank line arrives,
 *   whatever the cut: LF, CRLF, a CR and its LF in two reads, a line split anywhere, a multi-byte
 *   character split between its bytes;
 * - comments (keep-alives) and events of another type are skipped; several data lines are joined
 *   with LF; an event the stream ends before its blank line is dropped;
 * - chunked data split inside a size line, inside the data and inside the CRLFs is decoded whole,
 *   and the decoder says it is done at the last chunk; a malformed size line is refused.
 */
import { describe, expect, it } from 'vitest';
import { ChunkedDecoder } from '../../../src/platform/loopback-http.js';
import { SseReader } from '../../../src/platform/sse.js';

const STREAM =
  'event: message\ndata: {"text":"déjà vu — ✓"}\n\n' +
  ': keep-alive\n\n' +
  'data: unnamed\r\n\r\n' +
  'event: ping\ndata: not a message\n\n' +
  'event: message\rdata: first\rdata: second\r\r' +
  'data: never finished\n';

const EXPECTED = ['{"text":"déjà vu — ✓"}', 'unnamed', 'first\nsecond'];

function readAll(pieces: Uint8Array[]): { seen: string[]; after: number[] } {
  const seen: string[] = [];
  const after: number[] = [];
  const reader = new SseReader((data) => seen.push(data));
  pieces.forEach((piece, index) => {
    const before = seen.length;
    reader.push(piece);
    for (let n = before; n < seen.length; n += 1) after.push(index);
  });
  reader.end();
  return { seen, after };
}

describe('SseReader', () => {
  it('hands on each message event at its closing blank line, even fed one byte at a time', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    const pieces = [...bytes].map((byte) => Uint8Array.of(byte));
    const { seen, after } = readAll(pieces);
    expect(seen).toEqual(EXPECTED);
    // Each event is handed on with the byte that completes it, not at the end of the stream.
    const firstEnd = Buffer.byteLength('event: message\ndata: {"text":"déjà vu — ✓"}\n\n') - 1;
    expect(after[0]).toBe(firstEnd);
  });

  it('reads the same events whatever the cut, a multi-byte character split between reads included', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    const split = bytes.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
    for (const cuts of [[split], [1, split, split + 1], [bytes.indexOf(0x0d) + 1], [7, 19, 33, 48, 70, 90]]) {
      const pieces: Uint8Array[] = [];
      let start = 0;
      for (const cut of [...cuts, bytes.length]) {
        pieces.push(bytes.subarray(start, cut));
        start = cut;
      }
      expect(readAll(pieces).seen).toEqual(EXPECTED);
    }
  });
});

describe('ChunkedDecoder', () => {
  const body = Buffer.from('event: message\ndata: é\n\n', 'utf8');
  const encoded = Buffer.concat([
    Buffer.from(`7\r\n`),
    body.subarray(0, 7),
    Buffer.from(`\r\n${(body.length - 7).toString(16)};ext=1\r\n`),
    body.subarray(7),
    Buffer.from('\r\n0\r\n\r\n'),
  ]);

  it('decodes data split anywhere, handing each piece on at once, and is done at the last chunk', () => {
    const decoder = new ChunkedDecoder();
    const out: Buffer[] = [];
    let doneAt = -1;
    for (let i = 0; i < encoded.length && doneAt < 0; i += 1) {
      if (decoder.push(encoded.subarray(i, i + 1), (data) => out.push(Buffer.from(data)))) doneAt = i;
      if (i === 3) expect(Buffer.concat(out).toString('latin1')).toBe('e'); // the first data byte is out
    }
    // Done with the line of the last (empty) chunk; the trailers' blank line is not waited for.
    expect(doneAt).toBe(encoded.length - 3);
    expect(decoder.done).toBe(true);
    expect(Buffer.concat(out).equals(body)).toBe(true);
  });

  it('refuses a size line that is not hexadecimal', () => {
    expect(() => new ChunkedDecoder().push(Buffer.from('zz\r\nabc'), () => undefined)).toThrow('malformed chunked body');
  });
});
