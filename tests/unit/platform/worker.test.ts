/**
 * Starting and stopping a worker thread (src/platform/worker.ts), with a real tiny thread
 * (tests/fixtures/worker/tiny-thread.mjs). Covers:
 * - the start message is answered as the thread posted it, a failure included;
 * - a thread that ends before its start message, or stays silent past the deadline, answers a
 *   failure naming the thread (the silent one is terminated);
 * - stop asks the thread to end by its own shutdown, waits for its exit and releases once; a
 *   second call, and concurrent callers, get the same promise;
 * - without a shutdown, stop terminates the thread;
 * - the stop is registered with the exit hooks, and forgotten once the thread has stopped;
 * - an unexpected exit is reported once, with its code; an exit by stop is not; an uncaught error
 *   reaches onError;
 * - a call the thread never answers ends with the thread.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runExitHooks } from '../../../src/platform/exit-hooks.js';
import { startThread, type Thread } from '../../../src/platform/worker.js';

const FILE = new URL('../../fixtures/worker/tiny-thread.mjs', import.meta.url);

type Start = { type: 'ready' } | { type: 'failed'; reason: string };
const failed = (reason: string): Start => ({ type: 'failed', reason });

const started: Thread[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((thread) => thread.terminate()));
});

function tiny(start: 'ready' | 'failed' | 'exit' | 'silent', options: { graceful?: boolean; afterStop?: () => void; onError?: (error: Error) => void } = {}): { thread: Thread; shutdown: ReturnType<typeof vi.fn> } {
  const shutdown = vi.fn(async () => thread.worker.postMessage('stop'));
  const thread = startThread({
    name: 'the tiny thread',
    file: FILE,
    workerData: { start },
    ...(options.graceful === false ? {} : { shutdown }),
    ...(options.afterStop ? { afterStop: options.afterStop } : {}),
    onError: options.onError ?? (() => undefined),
  });
  started.push(thread);
  return { thread, shutdown };
}

describe('starting', () => {
  it('answers the start message the thread posted, a failure included', async () => {
    expect(await tiny('ready').thread.started<Start>(10_000, failed)).toEqual({ type: 'ready' });
    expect(await tiny('failed').thread.started<Start>(10_000, failed)).toEqual({ type: 'failed', reason: 'the test said so' });
  });

  it('answers a failure naming the thread when it ends before its start message', async () => {
    expect(await tiny('exit').thread.started<Start>(10_000, failed)).toEqual({ type: 'failed', reason: 'the tiny thread ended (code 0) before it was ready' });
  });

  it('terminates a thread still silent at the deadline and answers a failure', async () => {
    const { thread } = tiny('silent');
    expect(await thread.started<Start>(200, failed)).toEqual({ type: 'failed', reason: 'the tiny thread did not start within 200 ms' });
    expect(await thread.exited).toBe(1);
  });
});

describe('stopping', () => {
  it('asks the thread to end, waits for its exit and releases once, however many callers ask', async () => {
    const afterStop = vi.fn();
    const { thread, shutdown } = tiny('ready', { afterStop });
    await thread.started<Start>(10_000, failed);
    expect(thread.stopping).toBe(false);
    const first = thread.stop();
    const second = thread.stop();
    expect(second).toBe(first);
    expect(thread.stopping).toBe(true);
    await Promise.all([first, second, thread.terminate()]);
    expect(await thread.exited).toBe(0);
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(afterStop).toHaveBeenCalledTimes(1);
    await thread.stop();
    expect(afterStop).toHaveBeenCalledTimes(1);
  });

  it('terminates a thread that has no shutdown of its own', async () => {
    const { thread } = tiny('ready', { graceful: false });
    await thread.started<Start>(10_000, failed);
    await thread.stop();
    expect(await thread.exited).toBe(1);
  });

  it('is stopped by the exit hooks, which forget it once it has stopped', async () => {
    const { thread, shutdown } = tiny('ready');
    await thread.started<Start>(10_000, failed);
    await runExitHooks();
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(await thread.exited).toBe(0);

    const { thread: other, shutdown: otherShutdown } = tiny('ready');
    await other.started<Start>(10_000, failed);
    await other.stop();
    await runExitHooks();
    expect(otherShutdown).toHaveBeenCalledTimes(1);
  });
});

describe('ending unasked', () => {
  it('reports an unexpected exit once, with its code', async () => {
    const { thread } = tiny('ready');
    await thread.started<Start>(10_000, failed);
    const unexpected = vi.fn();
    thread.onUnexpectedExit(unexpected);
    thread.worker.postMessage('crash');
    expect(await thread.exited).toBe(3);
    await vi.waitFor(() => expect(unexpected).toHaveBeenCalledWith('exit code 3'));
    await thread.stop();
    expect(unexpected).toHaveBeenCalledTimes(1);
  });

  it('does not call an exit by stop unexpected', async () => {
    const { thread } = tiny('ready');
    await thread.started<Start>(10_000, failed);
    const unexpected = vi.fn();
    thread.onUnexpectedExit(unexpected);
    await thread.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(unexpected).not.toHaveBeenCalled();
  });

  it('hands an uncaught error to onError, and the thread ends with it', async () => {
    const onError = vi.fn();
    const { thread } = tiny('ready', { onError });
    await thread.started<Start>(10_000, failed);
    thread.worker.postMessage('throw');
    expect(await thread.exited).toBe(1);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'thrown in the thread' }));
  });

  it('ends a call the thread never answers when the thread ends', async () => {
    const { thread } = tiny('ready');
    await thread.started<Start>(10_000, failed);
    expect(await thread.untilExit(Promise.resolve('answered'))).toBe('answered');
    expect(await thread.untilExit(Promise.reject(new Error('refused')))).toBeUndefined();
    const answer = thread.untilExit(new Promise<string>(() => undefined));
    thread.worker.postMessage('crash');
    expect(await answer).toBeUndefined();
  });
});
