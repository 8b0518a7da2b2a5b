/**
 * Calls between threads (src/threads/rpc.ts), over a real MessageChannel and a real worker
 * thread. Covers: a call answered with its value; a handler's failure answered as an RpcError
 * with its message; an unknown method refused; a deadline (a handler that never answers fails the
 * call, it never hangs); a value the sender cannot serialize (nested 10,000 deep) fails at once;
 * every pending call fails when the other side's port closes (a thread that ended).
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { rpcClient, RpcError, serveRpc } from '../../../src/threads/rpc.js';

interface Echo {
  echo(value: unknown): Promise<unknown>;
  fail(message: string): Promise<never>;
  never(): Promise<never>;
}

const channels: MessageChannel[] = [];
afterEach(() => {
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
  });
  return rpcClient<Echo>(channel.port2, ['echo', 'fail', 'never'], { timeoutMs, timeouts: { never: 100 } });
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
    const client = rpcClient<Echo>(channel.port2, ['echo'], { timeoutMs: 30_000 });
    await expect(client.echo('anyone there?')).rejects.toThrow('the other thread has gone');
    await new Promise((resolve) => worker.once('exit', resolve));
  });
});
