/**
 * When the layer is rebuilt (src/layer/rebuild-scheduler.ts): a burst makes one build after a quiet
 * window, a busy stream builds at least every max wait, builds never overlap, and changes during a
 * build make exactly one more.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RebuildScheduler } from '../../../src/layer/rebuild-scheduler.js';

describe('RebuildScheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('coalesces a burst into one build once nothing changed for the quiet window', async () => {
    const build = vi.fn(async () => undefined);
    const scheduler = new RebuildScheduler({ quietMs: 50, maxWaitMs: 1_000, build });
    for (let i = 0; i < 10; i += 1) {
      scheduler.poke();
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(build).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(50);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('builds after the max wait even while changes keep coming', async () => {
    const build = vi.fn(async () => undefined);
    const scheduler = new RebuildScheduler({ quietMs: 50, maxWaitMs: 200, build });
    for (let i = 0; i < 10; i += 1) {
      scheduler.poke();
      await vi.advanceTimersByTimeAsync(30);
    }
    // 300 ms of changes 30 ms apart: the max wait forced one build at 200 ms.
    expect(build).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(build).toHaveBeenCalledTimes(2);
  });

  it('runs one build at a time; changes during a build make exactly one more', async () => {
    let running = 0;
    let most = 0;
    const finishers: Array<() => void> = [];
    const build = vi.fn(
      () =>
        new Promise<void>((resolve) => {
          running += 1;
          most = Math.max(most, running);
          finishers.push(() => {
            running -= 1;
            resolve();
          });
        }),
    );
    const scheduler = new RebuildScheduler({ quietMs: 50, maxWaitMs: 1_000, build });
    scheduler.poke();
    await vi.advanceTimersByTimeAsync(50);
    expect(build).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 5; i += 1) scheduler.poke();
    await vi.advanceTimersByTimeAsync(500);
    expect(build).toHaveBeenCalledTimes(1);
    finishers.shift()?.();
    await vi.advanceTimersByTimeAsync(50);
    expect(build).toHaveBeenCalledTimes(2);
    finishers.shift()?.();
    await vi.advanceTimersByTimeAsync(500);
    expect(build).toHaveBeenCalledTimes(2);
    expect(most).toBe(1);
  });

  it('goes on after a build that failed, and starts nothing once closed', async () => {
    const build = vi.fn(async () => {
      throw new Error('broken');
    });
    const scheduler = new RebuildScheduler({ quietMs: 50, maxWaitMs: 1_000, build });
    scheduler.poke();
    await vi.advanceTimersByTimeAsync(50);
    scheduler.poke();
    await vi.advanceTimersByTimeAsync(50);
    expect(build).toHaveBeenCalledTimes(2);
    scheduler.poke();
    await scheduler.close();
    await vi.advanceTimersByTimeAsync(500);
    expect(build).toHaveBeenCalledTimes(2);
  });
});
