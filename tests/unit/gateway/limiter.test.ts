/**
 * A provider's cap: slots up to max_concurrent, then a FIFO queue up to max_queue, then a refusal;
 * a released slot goes to the oldest waiter; a waiter whose signal aborts leaves the queue; new
 * limits apply to the waiters at once.
 */
import { describe, expect, it } from 'vitest';
import { Limiter, type Acquired } from '../../../src/gateway/limiter.js';

function granted(acquired: Acquired): () => void {
  if (!acquired.ok) throw new Error(`expected a slot, got ${acquired.reason}`);
  return acquired.release;
}

describe('the limiter', () => {
  it('grants up to the cap, queues up to the bound in order, and refuses beyond it', async () => {
    const limiter = new Limiter(2, 2);
    const a = granted(await limiter.acquire());
    const b = granted(await limiter.acquire());
    const order: string[] = [];
    const c = Promise.resolve(limiter.acquire()).then((got) => (order.push('c'), granted(got)));
    const d = Promise.resolve(limiter.acquire()).then((got) => (order.push('d'), granted(got)));
    expect(await limiter.acquire()).toEqual({ ok: false, reason: 'full' });
    expect([limiter.active, limiter.queued]).toEqual([2, 2]);
    a();
    a(); // twice: still one slot back
    const releaseC = await c;
    expect(order).toEqual(['c']);
    expect([limiter.active, limiter.queued]).toEqual([2, 1]);
    b();
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    releaseC();
    releaseD();
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  it('takes a waiter whose client went away out of the queue', async () => {
    const limiter = new Limiter(1, 1);
    const held = granted(await limiter.acquire());
    const leaving = new AbortController();
    const waiting = limiter.acquire(leaving.signal);
    expect(limiter.queued).toBe(1);
    leaving.abort();
    expect(await waiting).toEqual({ ok: false, reason: 'aborted' });
    expect(limiter.queued).toBe(0);
    expect(await limiter.acquire(leaving.signal)).toEqual({ ok: false, reason: 'aborted' });
    held();
    expect(limiter.active).toBe(0);
  });

  it('lets waiters in at once when the cap is raised', async () => {
    const limiter = new Limiter(1, 5);
    granted(await limiter.acquire());
    const waiting = limiter.acquire();
    limiter.setLimits(2, 5);
    expect((await waiting).ok).toBe(true);
    expect(limiter.active).toBe(2);
  });
});
