/**
 * A call with a context crossing from the HTTP thread to the main thread: the dispatcher's
 * `invokeOnMainThread` over a real MessageChannel served by `hostControl` (src/hub/http-thread.ts)
 * around a fake runtime. Covers:
 * - the handler's progress lines reach the caller's onProgress, in order, before the outcome;
 * - aborting the caller's signal aborts the handler's and answers a `cancelled` outcome at once;
 * - without a context (or without onProgress) the handler gets no progress sink: nothing crosses
 *   the thread for a caller that does not listen.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { invokeOnMainThread } from '../../../src/http/dispatcher.js';
import { hostControl } from '../../../src/hub/http-thread.js';
import type { Runtime } from '../../../src/runtime/runtime.js';
import { rpcClient, serveRpc } from '../../../src/platform/rpc.js';
import { HOST_CONTROL_METHODS, type HostControl } from '../../../src/threads/http.js';
import { type CallContext, type CallOutcome } from '../../../src/platform/call.js';
import { waitFor } from '../../helpers/wait.js';

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const channel of channels.splice(0)) channel.port1.close();
});

/** A runtime whose `outcome` reports three lines, then waits for `finish` or its signal. */
function fakeRuntime() {
  const seen: Array<CallContext | undefined> = [];
  const finishers: Array<(outcome: CallOutcome) => void> = [];
  const runtime = {
    outcome: (_id: string, _input: unknown, _caller: string | null, call?: CallContext) =>
      new Promise<CallOutcome>((resolve) => {
        seen.push(call);
        for (const line of ['one', 'two', 'three']) call?.onProgress?.(line);
        finishers.push(resolve);
        call?.signal?.addEventListener('abort', () => resolve({ ok: true, json: '"stopped"' }));
      }),
  } as unknown as Runtime;
  return { runtime, seen, finish: (outcome: CallOutcome) => finishers.splice(0).forEach((resolve) => resolve(outcome)) };
}

function connect(runtime: Runtime) {
  const channel = new MessageChannel();
  channels.push(channel);
  serveRpc<HostControl>(channel.port1, hostControl(runtime));
  return rpcClient<HostControl>(channel.port2, HOST_CONTROL_METHODS, { timeoutMs: 5_000 });
}

describe('a call run in the main thread', () => {
  it("brings the handler's progress back to the caller, in order, before the outcome", async () => {
    const fake = fakeRuntime();
    const lines: string[] = [];
    const outcome = invokeOnMainThread(connect(fake.runtime), 'test.follow', {}, 'p2', { onProgress: (line) => lines.push(line), signal: new AbortController().signal });
    await waitFor(() => lines.length === 3, { timeoutMs: 2_000, what: 'the progress to arrive' });
    expect(lines).toEqual(['one', 'two', 'three']);
    fake.finish({ ok: true, json: '{"lines":3}' });
    expect(await outcome).toEqual({ ok: true, json: '{"lines":3}' });
  });

  it("aborts the handler's signal when the caller's aborts, and answers a cancelled outcome at once", async () => {
    const fake = fakeRuntime();
    const controller = new AbortController();
    const outcome = invokeOnMainThread(connect(fake.runtime), 'test.follow', {}, null, { signal: controller.signal });
    await waitFor(() => fake.seen.length === 1, { timeoutMs: 2_000, what: 'the handler to start' });
    controller.abort();
    expect(await outcome).toEqual({ ok: false, code: 'internal', message: 'the call was cancelled' });
    await waitFor(() => fake.seen[0]?.signal?.aborted, { timeoutMs: 2_000, what: "the handler's signal to abort" });
  });

  it('lends the handler no progress sink when the caller does not listen', async () => {
    const fake = fakeRuntime();
    const host = connect(fake.runtime);
    const plain = invokeOnMainThread(host, 'test.follow', {}, null);
    const signalOnly = invokeOnMainThread(host, 'test.follow', {}, null, { signal: new AbortController().signal });
    await waitFor(() => fake.seen.length === 2, { timeoutMs: 2_000, what: 'the handlers to start' });
    expect(fake.seen.map((call) => typeof call?.onProgress)).toEqual(['undefined', 'undefined']);
    fake.finish({ ok: true, json: '1' });
    expect(await Promise.all([plain, signalOnly])).toEqual([
      { ok: true, json: '1' },
      { ok: true, json: '1' },
    ]);
  });
});
