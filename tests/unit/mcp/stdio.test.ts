/**
 * serveStdio (src/mcp/stdio.ts) over PassThrough streams and a scripted frame handler. Covers:
 * - every line is answered, in the order the lines came, even when an earlier answer takes longer;
 * - blank and whitespace-only lines are ignored; a handler answer of `undefined` writes nothing;
 * - after input EOF, the session resolves only once the queued answers are written;
 * - an output stream that errors (a broken pipe) ends the session: it resolves and no further
 *   lines are handled;
 * - a request whose handler throws is answered -32603 (a notification is not);
 * - a handler that throws on one line does not stop later lines from being answered, the failure
 *   is logged on stderr, and the session still resolves at EOF.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveStdio, type FrameHandler } from '../../../src/mcp/stdio.js';
import { waitFor, withTimeout } from '../../helpers/wait.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Answers `line` with `answer:line`; a line listed in `held` waits for its deferred first. */
function scripted(held: Record<string, Deferred> = {}): FrameHandler & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    async handleLine(line) {
      seen.push(line);
      await held[line]?.promise;
      return line.startsWith('silent') ? undefined : `answer:${line}`;
    },
  };
}

function streams(): { input: PassThrough; output: PassThrough; written: () => string } {
  const input = new PassThrough();
  const output = new PassThrough();
  const chunks: string[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  return { input, output, written: () => chunks.join('') };
}

/** Lets pending I/O callbacks and promise jobs run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('serveStdio', () => {
  it('answers every line in the order the lines came, even when an earlier answer is slower', async () => {
    const { input, output, written } = streams();
    const slow = deferred();
    const handler = scripted({ first: slow });
    const served = serveStdio(handler, input, output);
    input.write('first\nsecond\n');
    input.write('third\n');
    await waitFor(() => handler.seen.length >= 1, { timeoutMs: 2_000, what: 'the first line to reach the handler' });
    await settle();
    expect(written()).toBe('');
    slow.resolve();
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('answer:first\nanswer:second\nanswer:third\n');
    expect(handler.seen).toEqual(['first', 'second', 'third']);
  });

  it('ignores blank lines and writes nothing for an undefined answer', async () => {
    const { input, output, written } = streams();
    const handler = scripted();
    const served = serveStdio(handler, input, output);
    input.end('\n   \none\r\n\t\nsilent notification\ntwo\n\n');
    await withTimeout(served, 2_000, 'the session to end');
    expect(handler.seen).toEqual(['one', 'silent notification', 'two']);
    expect(written()).toBe('answer:one\nanswer:two\n');
  });

  it('answers a last line that has no newline before EOF', async () => {
    const { input, output, written } = streams();
    const served = serveStdio(scripted(), input, output);
    input.end('only');
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('answer:only\n');
  });

  it('resolves after input EOF only once the queued answers are written', async () => {
    const { input, output, written } = streams();
    const slow = deferred();
    const handler = scripted({ b: slow });
    let over = false;
    const served = serveStdio(handler, input, output).then(() => {
      over = true;
    });
    input.end('a\nb\nc\n');
    await waitFor(() => handler.seen.includes('b'), { timeoutMs: 2_000, what: 'line b to reach the handler' });
    await settle();
    await settle();
    expect(over).toBe(false);
    expect(written()).toBe('answer:a\n');
    slow.resolve();
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('answer:a\nanswer:b\nanswer:c\n');
  });

  it('ends the session when the output errors like a broken pipe, and handles no further line', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { input, output, written } = streams();
    const handler = scripted();
    const served = serveStdio(handler, input, output);
    input.write('before\n');
    await waitFor(() => written().includes('answer:before'), { timeoutMs: 2_000, what: 'the first answer' });
    output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await withTimeout(served, 2_000, 'the session to end after EPIPE');
    input.write('after\n');
    await settle();
    expect(handler.seen).toEqual(['before']);
  });

  it('ends the session when the output emits an error event while input stays open', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { input, output } = streams();
    const served = serveStdio(scripted(), input, output);
    output.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await withTimeout(served, 2_000, 'the session to end after an error event');
    expect(input.writableEnded).toBe(false);
  });

  it('goes on answering later lines after the handler throws on one, and still ends at EOF', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { input, output, written } = streams();
    const seen: string[] = [];
    const handler: FrameHandler = {
      async handleLine(line) {
        seen.push(line);
        if (line === 'boom') throw new Error('handler failed');
        return `answer:${line}`;
      },
    };
    const served = serveStdio(handler, input, output);
    input.write('one\nboom\ntwo\n');
    await waitFor(() => written().includes('answer:two'), { timeoutMs: 2_000, what: 'the line after the failing one to be answered' });
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    expect(seen).toEqual(['one', 'boom', 'two']);
    // A line that is not JSON has no id to answer; JSON-RPC answers such a frame with id null.
    expect(written()).toBe(`answer:one\n${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error: handler failed' } })}\nanswer:two\n`);
    expect(stderr.mock.calls.map((call) => String(call[0])).join('')).toContain('handler failed');
  });

  it('answers a request whose handler throws with -32603 naming the failure', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { input, output, written } = streams();
    const handler: FrameHandler = {
      async handleLine(line) {
        if (line.includes('"boom"')) throw new Error('handler failed');
        return 'fine';
      },
    };
    const served = serveStdio(handler, input, output);
    input.write('{"jsonrpc":"2.0","id":7,"method":"boom"}\n{"jsonrpc":"2.0","method":"boom"}\nnext\n');
    await waitFor(() => written().includes('fine'), { timeoutMs: 2_000, what: 'the next line to be answered' });
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    const frames = written().trim().split('\n');
    expect(frames).toHaveLength(2); // the notification that failed gets no answer
    expect(JSON.parse(frames[0] as string)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error: handler failed' } });
    expect(frames[1]).toBe('fine');
  });
});
