/**
 * The batcher gathers the calls of one event-loop turn:
 * - calls submitted in the same turn run as one batch, answered each with its own result;
 * - a batch larger than the bound is split;
 * - when a batch fails, every call of it gets the failure answer, and later batches run.
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
      2,
    );
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)))).toEqual([1, 2, 3, 4, 5]);
    expect(sizes).toEqual([2, 2, 1]);
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
