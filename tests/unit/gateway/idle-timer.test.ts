/**
 * The idle limit of a streamed answer, on a fake clock: it fires once, `ms` after the last touch,
 * however many touches came before; never while paused, and counts afresh from a restart; never
 * after it was stopped.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleTimer } from '../../../src/gateway/idle-timer.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('IdleTimer', () => {
  it('fires once, a whole period after the last chunk', () => {
    const fired = vi.fn();
    const timer = new IdleTimer(1_000, fired);
    timer.start();
    for (let i = 0; i < 5; i += 1) {
      vi.advanceTimersByTime(900);
      timer.touch();
    }
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(999);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    timer.touch();
    timer.start();
    vi.advanceTimersByTime(10_000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('never fires while paused, and counts a whole period again from a restart', () => {
    const fired = vi.fn();
    const timer = new IdleTimer(1_000, fired);
    timer.start();
    vi.advanceTimersByTime(800);
    timer.pause();
    vi.advanceTimersByTime(5_000);
    expect(fired).not.toHaveBeenCalled();
    timer.start();
    vi.advanceTimersByTime(999);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('never fires once stopped, and stops twice safely', () => {
    const fired = vi.fn();
    const timer = new IdleTimer(1_000, fired);
    timer.start();
    vi.advanceTimersByTime(500);
    timer.stop();
    timer.stop();
    timer.start();
    vi.advanceTimersByTime(5_000);
    expect(fired).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });
});
