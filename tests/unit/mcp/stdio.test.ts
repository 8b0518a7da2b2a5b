/**
 * serveStdio (src/mcp/stdio.ts) over PassThrough streams and a scripted frame handler. Covers:
 * - every line is handled as it arrives and answered as soon as its answer is ready: a slow frame
 *   does not delay the fast ones behind it;
 * - frames that arrive while an `initialize` is being answered wait for its answer (a client that
 *   pipes its frames without waiting still has its initialize run first);
 * - a request's notifications (written through `notify`) go out at once, before its answer, each
 *   a whole frame; the server's own frames (`streamTo`) are written until EOF;
 * - blank and whitespace-only lines are ignored; a handler answer of `undefined` writes nothing;
 * - after input EOF, the session resolves only once the answers in progress are written;
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
  it('answers each line as soon as its answer is ready: a slow frame does not delay the fast ones behind it', async () => {
    const { input, output, written } = streams();
    const slow = deferred();
    const handler = scripted({ first: slow });
    const served = serveStdio(handler, input, output);
    input.write('first\nsecond\n');
    input.write('third\n');
    await waitFor(() => written() === 'answer:second\nanswer:third\n', { timeoutMs: 2_000, what: 'the fast lines to be answered' });
    expect(handler.seen).toEqual(['first', 'second', 'third']);
    slow.resolve();
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('answer:second\nanswer:third\nanswer:first\n');
  });

  it('holds the frames that arrive while an initialize is being answered until its answer is out', async () => {
    const { input, output, written } = streams();
    const slow = deferred();
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    const handler = scripted({ [initialize]: slow });
    const served = serveStdio(handler, input, output);
    input.write(`${initialize}\nafter\n`);
    await waitFor(() => handler.seen.length === 1, { timeoutMs: 2_000, what: 'the initialize to reach the handler' });
    await settle();
    expect(handler.seen).toEqual([initialize]);
    slow.resolve();
    await waitFor(() => written() === `answer:${initialize}\nanswer:after\n`, { timeoutMs: 2_000, what: 'both answers, initialize first' });
    // Once it is answered, frames go on at once again.
    input.end('later\n');
    await withTimeout(served, 2_000, 'the session to end');
    expect(handler.seen).toEqual([initialize, 'after', 'later']);
  });

  it("writes a request's notifications at once, before its answer, each a whole frame", async () => {
    const { input, output, written } = streams();
    const release = deferred();
    const handler: FrameHandler = {
      async handleLine(line, notify) {
        notify(`progress 1 of ${line}`);
        notify(`progress 2 of ${line}`);
        await release.promise;
        return `answer:${line}`;
      },
    };
    const served = serveStdio(handler, input, output);
    input.write('follow\n');
    await waitFor(() => written() === 'progress 1 of follow\nprogress 2 of follow\n', { timeoutMs: 2_000, what: 'the progress before the answer' });
    release.resolve();
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('progress 1 of follow\nprogress 2 of follow\nanswer:follow\n');
  });

  it("writes the server's own frames through streamTo's writer, and none after EOF", async () => {
    const { input, output, written } = streams();
    let send: ((frame: string) => void) | undefined;
    const handler: FrameHandler = { handleLine: async () => undefined, streamTo: (write) => (send = write) };
    const served = serveStdio(handler, input, output);
    expect(send).toBeTypeOf('function');
    send?.('{"jsonrpc":"2.0","method":"notifications/message"}');
    expect(written()).toBe('{"jsonrpc":"2.0","method":"notifications/message"}\n');
    input.end();
    await withTimeout(served, 2_000, 'the session to end');
    send?.('too late');
    await settle();
    expect(written()).toBe('{"jsonrpc":"2.0","method":"notifications/message"}\n');
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

  it('resolves after input EOF only once the answers in progress are written', async () => {
    const { input, output, written } = streams();
    const slow = deferred();
    const handler = scripted({ b: slow });
    let over = false;
    const served = serveStdio(handler, input, output).then(() => {
      over = true;
    });
    input.end('a\nb\nc\n');
    await waitFor(() => written() === 'answer:a\nanswer:c\n', { timeoutMs: 2_000, what: 'the lines that are not held to be answered' });
    await settle();
    await settle();
    expect(over).toBe(false);
    slow.resolve();
    await withTimeout(served, 2_000, 'the session to end');
    expect(written()).toBe('answer:a\nanswer:c\nanswer:b\n');
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
    const failure = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error: handler failed' } });
    expect(written().trim().split('\n').sort()).toEqual(['answer:one', 'answer:two', failure].sort());
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
    expect(frames).toContain('fine');
    expect(JSON.parse(frames.find((frame) => frame !== 'fine') as string)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error: handler failed' } });
  });
});
