/**
 * The one `text/event-stream` parser (src/platform/sse.ts) and the bridge's readers of a streamed
 * answer built on it, fed piece by piece (with the chunked decoder of src/platform/loopback-http.ts).
 * Covers:
 * - SseParser: `event`, `data` joined with LF and `id` (carried over to later events); LF, CRLF and
 *   CR line ends, a CRLF split between two reads; a line split anywhere; a multi-byte character
 *   split between its bytes; comments, `retry` and unknown fields ignored; an event without data
 *   not dispatched; an unfinished event dropped at the end, or dispatched with `flush`; an event
 *   over `maxEventChars` dropped whole while the next one is read; `closing` says what brings a
 *   stream cut anywhere back to the start of an event;
 * SseReader (the bridge's view):
 * - every `message` event (named or not) is handed on as soon as its closing blank line arrives,
 *   whatever the cut: LF, CRLF, a CR and its LF in two reads, a line split anywhere, a multi-byte
 *   character split between its bytes;
 * - comments (keep-alives) and events of another type are skipped; several data lines are joined
 *   with LF; an event the stream ends before its blank line is dropped;
 * - a priming event (an id, a retry and empty data: MCP 2025-11-25's resumable streams) is no
 *   message and is skipped; the events after it carry on;
 * - chunked data split inside a size line, inside the data and inside the CRLFs is decoded whole,
 *   and the decoder says it is done at the last chunk; a malformed size line is refused.
 */
import { describe, expect, it } from 'vitest';
import { ChunkedDecoder } from '../../../src/platform/loopback-http.js';
import { SseParser, SseReader, type SseEvent } from '../../../src/platform/sse.js';

/** Every event of `text` fed in pieces of `size` bytes (every size when none is given). */
function eventsOf(text: string, options: { size?: number; flush?: boolean; maxEventChars?: number } = {}): SseEvent[] {
  const bytes = Buffer.from(text, 'utf8');
  const sizes = options.size === undefined ? [1, 2, 3, 5, 8, bytes.length] : [options.size];
  let first: SseEvent[] | null = null;
  for (const size of sizes) {
    const events: SseEvent[] = [];
    const parser = new SseParser((event) => events.push(event), options.maxEventChars === undefined ? {} : { maxEventChars: options.maxEventChars });
    for (let at = 0; at < bytes.length; at += size) parser.push(bytes.subarray(at, at + size));
    parser.end({ flush: options.flush ?? false });
    if (first === null) first = events;
    else expect(events).toEqual(first);
  }
  return first ?? [];
}

describe('SseParser', () => {
  it('reads event, data joined with LF and id, the id carried over, whatever the line ends and the cuts', () => {
    const text =
      'event: delta\r\nid: 7\r\ndata: {"a":"é"}\r\ndata: second line\r\n\r\n' +
      'data:no space\rdata:  two spaces\r\r' +
      'data: ✓ check\n\n';
    expect(eventsOf(text)).toEqual([
      { event: 'delta', data: '{"a":"é"}\nsecond line', id: '7' },
      { event: 'message', data: 'no space\n two spaces', id: '7' },
      { event: 'message', data: '✓ check', id: '7' },
    ]);
  });

  it('hands an event on with the byte that ends it, a CR ending its blank line included', () => {
    const seen: string[] = [];
    const parser = new SseParser((event) => seen.push(event.data));
    parser.push(Buffer.from('data: one\r'));
    expect(seen).toEqual([]);
    parser.push(Buffer.from('\r'));
    expect(seen).toEqual(['one']); // CR CR: the line, then the blank line
    parser.push(Buffer.from('\ndata: two\r\n')); // that LF ends nothing: it completes the CRLF of the last CR
    parser.push(Buffer.from('\r'));
    expect(seen).toEqual(['one', 'two']);
    parser.push(Buffer.from('\n')); // the LF of that CRLF: no new blank line, nothing dispatched
    expect(seen).toEqual(['one', 'two']);
  });

  it('reads a multi-byte character split between reads', () => {
    const bytes = Buffer.from('data: 日本\n\n', 'utf8');
    const seen: string[] = [];
    const parser = new SseParser((event) => seen.push(event.data));
    for (const byte of bytes) parser.push(Uint8Array.of(byte));
    expect(seen).toEqual(['日本']);
  });

  it('ignores comments, retry and unknown fields, and dispatches no event without data', () => {
    expect(eventsOf(': keep-alive\n\nretry: 100\nfoo: bar\n\nevent: ping\n\ndata\n\nid: 3\ndata: x\n\n')).toEqual([
      { event: 'message', data: '', id: '' },
      { event: 'message', data: 'x', id: '3' },
    ]);
  });

  it('drops an event the stream ends before its blank line, unless asked to flush it', () => {
    expect(eventsOf('data: whole\n\ndata: half\ndata: unfinished')).toEqual([{ event: 'message', data: 'whole', id: '' }]);
    expect(eventsOf('data: whole\n\ndata: half\ndata: unfinished', { flush: true }).map((event) => event.data)).toEqual(['whole', 'half\nunfinished']);
  });

  it('drops an event over maxEventChars whole and reads on at the next one', () => {
    const big = 'x'.repeat(100);
    const text = `data: small\n\ndata: ${big}\ndata: rest of the big one\n\ndata: ${big}\n\nevent: e\ndata: after\n\n`;
    expect(eventsOf(text, { maxEventChars: 50 })).toEqual([
      { event: 'message', data: 'small', id: '' },
      { event: 'e', data: 'after', id: '' },
    ]);
  });

  it('says what brings a stream cut anywhere back to the start of an event', () => {
    const closingAfter = (text: string): string => {
      const parser = new SseParser(() => undefined, { maxEventChars: 50 });
      parser.push(Buffer.from(text));
      return parser.closing;
    };
    expect(closingAfter('')).toBe('');
    expect(closingAfter('data: a\n\n')).toBe('');
    expect(closingAfter(': comment\n')).toBe('');
    expect(closingAfter('data: a\n')).toBe('\n');
    expect(closingAfter('event: x\n')).toBe('\n');
    expect(closingAfter('data: a\r')).toBe('\n\n');
    expect(closingAfter('data: a\r\n')).toBe('\n');
    expect(closingAfter('data: {"cho')).toBe('\n\n');
    expect(closingAfter(`data: ${'x'.repeat(60)}`)).toBe('\n\n');
    // Whatever the cut, the closing then an event of our own is read as that event, last.
    const stream = 'data: {"n":1}\r\n\r\nevent: e\ndata: {"n":2}\rdata: more\r\n\ndata: {"n":3}\n\n';
    for (let cut = 0; cut <= stream.length; cut += 1) {
      const events: SseEvent[] = [];
      const parser = new SseParser((event) => events.push(event));
      parser.push(Buffer.from(stream.slice(0, cut)));
      parser.push(Buffer.from(`${parser.closing}data: ours\n\n`));
      expect(events.at(-1)).toEqual({ event: 'message', data: 'ours', id: '' });
    }
  });
});

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

describe('SseReader and resumable streams', () => {
  it('skips a priming event (id, retry, empty data) and hands on the events after it', () => {
    const { seen } = readAll([Buffer.from('id: 1-0\nretry: 1000\ndata: \n\nid: 1-1\nevent: message\ndata: {"id":1}\n\n', 'utf8')]);
    expect(seen).toEqual(['{"id":1}']);
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
