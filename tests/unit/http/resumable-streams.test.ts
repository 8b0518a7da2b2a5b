/**
 * Resumable streams of one `/mcp` session (src/http/resumable-streams.ts), with fake timers.
 * Covers:
 * - resumability starts with protocol 2025-11-25;
 * - a request stream whose connection broke is abandoned (its request cancelled) only when no
 *   client reconnected within the window; one that reconnected, or ended, is not;
 * - an ended stream stays replayable for the window, then is forgotten; at most a few ended
 *   streams are kept, the oldest forgotten first;
 * - a stream keeps its newest events for replay within its bounds (the newest always);
 * - ids of another form, of an unknown stream or beyond the last event are not found.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ENDED_STREAMS_KEPT,
  REPLAY_EVENTS,
  RESUME_WINDOW_MS,
  resumableProtocol,
  SessionStreams,
} from '../../../src/http/resumable-streams.js';
import type { ReplySink } from '../../../src/platform/http-exchange.js';

function sink(): ReplySink & { text: string; ended: boolean; leave(): void } {
  const gone = new AbortController();
  const s = {
    text: '',
    ended: false,
    signal: gone.signal,
    write(piece: string | Uint8Array) {
      if (!s.ended) s.text += String(piece);
      return true;
    },
    end() {
      s.ended = true;
    },
    cut() {
      s.ended = true;
    },
    onWritable() {},
    leave: () => gone.abort(),
  };
  return s;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('resumable streams', () => {
  it('start with protocol 2025-11-25', () => {
    expect(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-01-01', null].map(resumableProtocol)).toEqual([false, false, false, true, true, false]);
  });

  it('cancel a request whose connection broke only when no client reconnected within the window', () => {
    const streams = new SessionStreams();
    const abandoned: number[] = [];
    const lost = streams.open(() => abandoned.push(1));
    const back = streams.open(() => abandoned.push(2));
    const done = streams.open(() => abandoned.push(3));
    const connections = [sink(), sink(), sink()];
    [lost, back, done].forEach((stream, i) => stream.connect(connections[i] as ReplySink, null));
    for (const connection of connections) connection.leave();
    vi.advanceTimersByTime(RESUME_WINDOW_MS - 1);
    back.connect(sink(), 0);
    streams.finish(done);
    vi.advanceTimersByTime(1);
    expect(abandoned).toEqual([1]);
    streams.close();
  });

  it('keep an ended stream replayable for the window, and at most a few ended ones, the oldest forgotten first', () => {
    const streams = new SessionStreams();
    const ended = Array.from({ length: ENDED_STREAMS_KEPT + 1 }, () => {
      const stream = streams.open(() => undefined);
      stream.send('{"n":1}');
      streams.finish(stream);
      return stream.id;
    });
    expect(streams.find(`${ended[0]}-0`)).toBeNull();
    expect(streams.find(`${ended[1]}-0`)).not.toBeNull();
    vi.advanceTimersByTime(RESUME_WINDOW_MS);
    expect(ended.map((id) => streams.find(`${id}-0`))).toEqual(ended.map(() => null));
    expect(streams.find('0-0')).not.toBeNull(); // the session's own stream stays
  });

  it('keep the newest events of a stream for replay', () => {
    const streams = new SessionStreams();
    const stream = streams.open(() => undefined);
    for (let n = 1; n <= REPLAY_EVENTS + 5; n += 1) stream.send(`{"n":${n}}`);
    const resumed = sink();
    stream.connect(resumed, 0);
    const ids = [...resumed.text.matchAll(/^id: 1-(\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(REPLAY_EVENTS);
    expect(ids[0]).toBe(6);
    expect(ids.at(-1)).toBe(REPLAY_EVENTS + 5);
    const big = streams.open(() => undefined);
    big.send(`"${'x'.repeat(2 * 1024 * 1024)}"`);
    const whole = sink();
    big.connect(whole, 0);
    expect(whole.text).toMatch(/^id: 2-1\nevent: message\ndata: "x+"\n\n$/);
    streams.close();
  });

  it('find no stream for an id of another form, of an unknown stream, or beyond its last event', () => {
    const streams = new SessionStreams();
    const stream = streams.open(() => undefined);
    stream.send('{}');
    expect(streams.find('1-1')).toEqual({ stream, after: 1 });
    expect(streams.find(' 1-0 ')).toEqual({ stream, after: 0 });
    for (const id of ['1-2', '2-0', '1', '1-x', '-1-0', '1-0-0', '']) expect(streams.find(id)).toBeNull();
    streams.close();
    expect(streams.find('1-0')).toBeNull();
  });
});
