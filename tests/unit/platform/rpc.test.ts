/**
 * Calls between threads (src/platform/rpc.ts), over a real MessageChannel and a real worker
 * thread. Covers: a call answered with its value; a handler's failure answered as an RpcError
 * with its message; an unknown method refused; a deadline (a handler that never answers fails the
 * call, it never hangs); a value the sender cannot serialize (nested 10,000 deep) fails at once;
 * every pending call fails when the other side's port closes (a thread that ended).
 * And the streaming half: the events a handler posts reach that call's listener only, in order,
 * before its answer, and none after it; a handler whose caller does not listen is told so and
 * posts nothing; aborting a call's signal rejects it at once and aborts the
 * handler's signal; a call whose signal already aborted is never sent; a port that closes aborts
 * the handlers still running; a call's own deadline replaces the method's.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { rpcClient, RpcError, serveRpc, type RpcCallScope } from '../../../src/platform/rpc.js';
import { waitFor } from '../../helpers/wait.js';

interface Echo {
  echo(value: unknown): Promise<unknown>;
  fail(message: string): Promise<never>;
  never(): Promise<never>;
  count(to: number): Promise<string>;
  wait(): Promise<string>;
}

/** The scopes the served handlers were given, in call order. */
const scopes: RpcCallScope[] = [];

const channels: MessageChannel[] = [];
afterEach(() => {
  scopes.length = 0;
  for (const channel of channels.splice(0)) {
    channel.port1.close();
    channel.port2.close();
  }
});

function pair(timeoutMs = 2_000) {
  const channel = new MessageChannel();
  channels.push(channel);
  serveRpc<Echo>(channel.port1, {
    echo: async (value) => value,
    fail: async (message) => {
      throw new Error(message);
    },
    never: () => new Promise<never>(() => {}),
    count: async (to, scope) => {
      scopes.push(scope);
      for (let n = 1; n <= to; n += 1) scope.emit('progress', `${n} of ${to}`);
      // Posted after the answer: the caller must never see it.
      setTimeout(() => scope.emit('progress', 'late'), 0);
      return `counted to ${to}`;
    },
    wait: (scope) => {
      scopes.push(scope);
      return new Promise<string>((resolve) => scope.signal.addEventListener('abort', () => resolve('stopped')));
    },
  });
  return rpcClient<Echo>(channel.port2, ['echo', 'fail', 'never', 'count', 'wait'], { timeoutMs, timeouts: { never: 100 } });
}

describe('rpc', () => {
  it('answers a call with its value, as JSON', async () => {
    const client = pair();
    expect(await client.echo({ a: [1, 'two', { three: null }] })).toEqual({ a: [1, 'two', { three: null }] });
  });

  it('fails a call whose handler throws, with its message, and refuses an unknown method', async () => {
    const client = pair();
    await expect(client.fail('no such object')).rejects.toEqual(new RpcError('no such object'));
    const unknown = rpcClient<{ missing(): Promise<void> }>(channels[0]!.port2, ['missing'], { timeoutMs: 2_000 });
    await expect(unknown.missing()).rejects.toThrow('no method missing');
  });

  it('fails a call that is not answered by its deadline', async () => {
    const client = pair();
    await expect(client.never()).rejects.toThrow('never was not answered within 100 ms');
    expect(await client.echo('still answering')).toBe('still answering');
  });

  it('fails at once a call whose arguments cannot be written, instead of leaving it unanswered', async () => {
    const client = pair();
    let deep: unknown = [];
    for (let i = 0; i < 10_000; i += 1) deep = [deep];
    await expect(client.echo(deep)).rejects.toThrow(/echo could not be sent/);
  });

  it('fails every pending call when the thread on the other side ends', async () => {
    const channel = new MessageChannel();
    channels.push(channel);
    // The server side lives in a real worker that exits without answering.
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads'); workerData.port.on('message', () => process.exit(0));`,
      { eval: true, workerData: { port: channel.port1 }, transferList: [channel.port1] },
    );
    // Listened for before anything can make the worker exit: under load its `exit` event may well
    // come before the call's rejection, and an event that has passed is never heard.
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const client = rpcClient<Echo>(channel.port2, ['echo'], { timeoutMs: 30_000 });
    await expect(client.echo('anyone there?')).rejects.toThrow('the other thread has gone');
    expect(await exited).toBe(0);
  });

  it("delivers a call's events to that call's listener, in order, before its answer, and none after it", async () => {
    const client = pair();
    const seen: Record<string, unknown[]> = { three: [], two: [] };
    const [three, two] = await Promise.all([
      client.callWith('count', [3], { onEvent: (stream, data) => seen.three?.push([stream, data]) }),
      client.callWith('count', [2], { onEvent: (stream, data) => seen.two?.push([stream, data]) }),
    ]);
    expect([three, two]).toEqual(['counted to 3', 'counted to 2']);
    expect(seen.three).toEqual([['progress', '1 of 3'], ['progress', '2 of 3'], ['progress', '3 of 3']]);
    expect(seen.two).toEqual([['progress', '1 of 2'], ['progress', '2 of 2']]);
    // The late events have had their turn by the time a later call is answered.
    expect(await client.echo('after')).toBe('after');
    expect(seen.three).toHaveLength(3);
    expect(seen.two).toHaveLength(2);
  });

  it("cancels a call when its signal aborts: it rejects at once and the handler's signal aborts", async () => {
    const client = pair();
    const controller = new AbortController();
    const waiting = client.callWith('wait', [], { signal: controller.signal });
    await waitFor(() => scopes.length === 1, { timeoutMs: 2_000, what: 'the handler to start' });
    expect(scopes[0]?.signal.aborted).toBe(false);
    controller.abort();
    await expect(waiting).rejects.toThrow('wait was cancelled');
    await waitFor(() => scopes[0]?.signal.aborted, { timeoutMs: 2_000, what: "the handler's signal to abort" });
    expect(await client.echo('still serving')).toBe('still serving');
  });

  it('never sends a call whose signal has already aborted', async () => {
    const client = pair();
    await expect(client.callWith('wait', [], { signal: AbortSignal.abort() })).rejects.toThrow('wait was cancelled');
    expect(await client.echo('next')).toBe('next');
    expect(scopes).toEqual([]);
  });

  it('aborts the handlers still running when the caller\'s port closes', async () => {
    const client = pair();
    void client.callWith('wait', [], {}).catch(() => undefined);
    await waitFor(() => scopes.length === 1, { timeoutMs: 2_000, what: 'the handler to start' });
    channels[0]?.port2.close();
    await waitFor(() => scopes[0]?.signal.aborted, { timeoutMs: 2_000, what: "the handler's signal to abort" });
  });

  it("takes a call's own deadline instead of the method's, and none with Infinity", async () => {
    const client = pair();
    await expect(client.callWith('never', [], { timeoutMs: 250 })).rejects.toThrow('never was not answered within 250 ms');
    const controller = new AbortController();
    const unbounded = client.callWith('wait', [], { timeoutMs: Number.POSITIVE_INFINITY, signal: controller.signal });
    await waitFor(() => scopes.length === 1, { timeoutMs: 2_000, what: 'the handler to start' });
    controller.abort();
    await expect(unbounded).rejects.toThrow('wait was cancelled');
  });

  it('tells a handler whether its caller listens, and posts nothing for one that does not', async () => {
    const client = pair();
    expect(await client.count(2)).toBe('counted to 2');
    expect(await client.callWith('count', [1], { onEvent: () => undefined })).toBe('counted to 1');
    expect(scopes.map((scope) => scope.listening)).toEqual([false, true]);
  });
});

describe('SharedArrayBuffer arguments', () => {
  it('cross as the same memory, beside JSON arguments, wherever they sit in them', async () => {
    const channel = new MessageChannel();
    channels.push(channel);
    let received: { buffer: SharedArrayBuffer; nested: { inner: SharedArrayBuffer; n: number } } | null = null;
    serveRpc<{ take(buffer: SharedArrayBuffer, nested: { inner: SharedArrayBuffer; n: number }): Promise<number> }>(channel.port1, {
      take: async (buffer, nested) => {
        received = { buffer, nested };
        new Uint8Array(buffer)[0] = 42;
        return buffer.byteLength + nested.n;
      },
    });
    const client = rpcClient<{ take(buffer: SharedArrayBuffer, nested: { inner: SharedArrayBuffer; n: number }): Promise<number> }>(channel.port2, ['take'], { timeoutMs: 2_000 });
    const buffer = new SharedArrayBuffer(8);
    const inner = new SharedArrayBuffer(4);
    expect(await client.take(buffer, { inner, n: 1 })).toBe(9);
    expect(received!.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(received!.nested.inner.byteLength).toBe(4);
    // The handler wrote into the caller's memory: nothing was copied.
    expect(new Uint8Array(buffer)[0]).toBe(42);
  });

  it('leaves a plain object that only looks like the mark alone when no buffer was sent', async () => {
    const client = pair();
    expect(await client.echo({ $majordomusShared: 0 })).toEqual({ $majordomusShared: 0 });
  });
});
