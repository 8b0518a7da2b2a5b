/**
 * The HTTP thread's channels to the pool threads (src/http/pool-channels.ts), over a task module
 * that speaks the channel's protocol (tests/fixtures/pool/echo-task.mjs):
 * - a batch is answered in order, each call with its own answer;
 * - a new generation reaches every thread before the next batch;
 * - each thread gets a channel of its own, and batches go to the least busy;
 * - a thread that ends on its own answers its calls `internal`, and a new thread takes its place;
 * - after a stop every call is refused without a thread, and a second stop is harmless.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PoolChannels } from '../../../src/http/pool-channels.js';
import type { CallOutcome } from '../../../src/platform/call.js';

const TASK = fileURLToPath(new URL('../../fixtures/pool/echo-task.mjs', import.meta.url));

interface Echo {
  generation: number;
  input: unknown;
  caller: string | null;
  thread: number;
}

function echo(outcome: CallOutcome | undefined): Echo {
  if (!outcome?.ok) throw new Error(`not answered: ${JSON.stringify(outcome)}`);
  return JSON.parse(outcome.json) as Echo;
}

let pool: PoolChannels | null = null;
const start = (threads: number): PoolChannels => {
  pool = new PoolChannels({ taskFile: TASK, threads, generation: 1, workerData: { snapshot: new SharedArrayBuffer(8), nice: 0, faultCapability: null } });
  return pool;
};

afterEach(async () => {
  await pool?.stop();
  pool = null;
});

describe('the pool channels', () => {
  it('answers a batch in order, each call with its own answer', async () => {
    const channels = start(1);
    const outcomes = await channels.run([
      ['objects.get', { uri: 'a' }, null],
      ['objects.get', { uri: 'b' }, 'p2'],
      ['objects.search', { query: 'c' }, null],
    ]);
    expect(outcomes.map(echo).map(({ input, caller }) => ({ input, caller }))).toEqual([
      { input: { uri: 'a' }, caller: null },
      { input: { uri: 'b' }, caller: 'p2' },
      { input: { query: 'c' }, caller: null },
    ]);
  });

  it('hands every thread a new generation before the next batch', async () => {
    const channels = start(2);
    channels.useSnapshot(new SharedArrayBuffer(8), 2);
    const answers = await Promise.all([channels.run([['x', 1, null]]), channels.run([['x', 2, null]])]);
    expect(answers.flat().map(echo).map((e) => e.generation)).toEqual([2, 2]);
  });

  it('gives each thread a channel of its own and sends a batch to the least busy one', async () => {
    const channels = start(2);
    const slow = channels.run([['slow', 1, null]]);
    const quick = await channels.run([['x', 2, null]]);
    const slowThread = echo((await slow)[0]).thread;
    expect(echo(quick[0]).thread).not.toBe(slowThread);
  });

  it('answers the calls of a thread that ended internal, and serves on with a new thread', async () => {
    const channels = start(1);
    const [lost] = await channels.run([['exit', 1, null]]);
    expect(lost).toMatchObject({ ok: false, code: 'internal' });
    const [after] = await channels.run([['x', 2, null]]);
    expect(echo(after).input).toBe(2);
  });

  it('refuses calls once stopped, and a second stop is harmless', async () => {
    const channels = start(1);
    await channels.run([['x', 1, null]]);
    await Promise.all([channels.stop(), channels.stop()]);
    const [refused] = await channels.run([['x', 2, null]]);
    expect(refused).toMatchObject({ ok: false, code: 'internal' });
  });
});
