/**
 * The logger's records (src/platform/log.ts). Covers:
 * - a line logged in this thread reaches every subscriber, whatever the stderr threshold (a debug
 *   line under the default `info` too), with its level and text;
 * - a record posted on the channel by another thread reaches the subscribers of this one;
 * - what is not a record (junk on the channel) is ignored;
 * - an unsubscribed listener hears nothing more, and the other subscribers go on hearing.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { log, onLogRecord, type LogRecord } from '../../../src/platform/log.js';
import { waitFor } from '../../helpers/wait.js';

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

function listen(): LogRecord[] {
  const heard: LogRecord[] = [];
  stops.push(onLogRecord((record) => heard.push(record)));
  return heard;
}

/** Runs a thread that posts `messages` on the log channel and ends. */
async function postFromAnotherThread(messages: unknown[]): Promise<void> {
  const source = `const { BroadcastChannel, workerData } = require('node:worker_threads');
const channel = new BroadcastChannel('majordomus:log');
for (const message of workerData) channel.postMessage(message);
channel.close();`;
  const worker = new Worker(source, { eval: true, workerData: messages });
  await new Promise((resolve) => worker.once('exit', resolve));
}

describe('log records', () => {
  it('reaches every subscriber with a line logged in this thread, whatever the stderr threshold', async () => {
    const first = listen();
    const second = listen();
    log.debug('a debug line the threshold keeps off stderr');
    await waitFor(() => first.length > 0 && second.length > 0);
    expect(first).toEqual([{ level: 'debug', message: 'a debug line the threshold keeps off stderr' }]);
    expect(second).toEqual(first);
  });

  it('reaches this thread with a record another thread posted, and ignores what is not a record', async () => {
    const heard = listen();
    await postFromAnotherThread([{ level: 'loud', message: 'x' }, 'junk', { level: 'warn', message: 'gateway: a provider stalled' }]);
    await waitFor(() => heard.length > 0);
    expect(heard).toEqual([{ level: 'warn', message: 'gateway: a provider stalled' }]);
  });

  it('stops calling a listener once it unsubscribed, and goes on calling the others', async () => {
    const kept = listen();
    const dropped: LogRecord[] = [];
    const unsubscribe = onLogRecord((record) => dropped.push(record));
    unsubscribe();
    log.debug('after the unsubscribe');
    await waitFor(() => kept.length > 0);
    expect(dropped).toEqual([]);
  });
});
