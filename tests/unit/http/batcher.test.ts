/**
 * The batcher gathers the calls of one event-loop turn:
 * - calls submitted in the same turn run as one batch, answered each with its own result;
 * - a batch larger than the bound is split;
 * - a turn is split into one batch per pool thread at least;
 * - past the bound on waiting calls a call is answered at once as failed (saturation);
 * - when a batch fails (rejects, throws at once, answers short), every call of it gets the
 *   failure answer, and later batches run.
 */
import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../src/http/batcher.js';

describe('Batcher', () => {
  it('runs the calls of one turn as one batch and answers each with its own result', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((n) => n * 10);
      },
      () => -1,
    );
    const answers = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    expect(answers).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(await batcher.submit(4)).toBe(40);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('splits a turn larger than the bound into several batches', async () => {
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        sizes.push(items.length);
        return items;
      },
      () => -1,
      { maxBatch: 2 },
    );
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)))).toEqual([1, 2, 3, 4, 5]);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('splits a turn into one batch per pool thread at least', async () => {
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        sizes.push(items.length);
        return items;
      },
      () => -1,
      { parallelism: 2, maxBatch: 64 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)));
    expect(sizes).toEqual([3, 2]);
  });

  it('answers a call at once with the failure answer when too many are waiting', async () => {
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new Batcher<number, string>(
      async (items) => {
        await gate;
        return items.map(String);
      },
      () => 'busy',
      { maxPending: 2 },
    );
    const first = [batcher.submit(1), batcher.submit(2)];
    expect(await batcher.submit(3)).toBe('busy');
    release();
    expect(await Promise.all(first)).toEqual(['1', '2']);
    expect(await batcher.submit(4)).toBe('4');
  });

  it('answers every call with the failure answer when the runner throws at once or answers short', async () => {
    const throwing = new Batcher<number, string>(
      () => {
        throw new Error('sync');
      },
      (error) => `failed: ${(error as Error).message}`,
    );
    expect(await Promise.all([1, 2].map((n) => throwing.submit(n)))).toEqual(['failed: sync', 'failed: sync']);
    const short = new Batcher<number, string>(async () => ['only one'], () => 'failed');
    expect(await Promise.all([1, 2].map((n) => short.submit(n)))).toEqual(['failed', 'failed']);
  });

  it('answers every call of a failed batch with the failure answer and keeps going', async () => {
    let fail = true;
    const batcher = new Batcher<number, string>(
      async (items) => {
        if (fail) throw new Error('pool closed');
        return items.map(String);
      },
      (error) => `failed: ${(error as Error).message}`,
    );
    expect(await Promise.all([1, 2].map((n) => batcher.submit(n)))).toEqual(['failed: pool closed', 'failed: pool closed']);
    fail = false;
    expect(await batcher.submit(3)).toBe('3');
  });
});
