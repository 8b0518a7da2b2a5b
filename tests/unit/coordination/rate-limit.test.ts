/**
 * The per-sender token bucket, on an injected clock (no waiting). Covers:
 * - a sender spends its burst at once, then is refused with the time until its next token;
 * - tokens come back at the rate, never past the burst; the retry time rounds up to whole ms;
 * - senders never share a bucket;
 * - a clock that steps back takes nothing away;
 * - full buckets are swept, so the table follows the senders of late, not every sender ever.
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/coordination/rate-limit.js';

function limiter(perSecond: number, burst: number) {
  let now = 1_000_000;
  const limits = new RateLimiter({ perSecond, burst }, () => now);
  return { limits, advance: (ms: number) => (now += ms), set: (at: number) => (now = at) };
}

const spend = (limits: RateLimiter, sender: string, times: number) => Array.from({ length: times }, () => limits.take(sender).ok).filter(Boolean).length;

describe('RateLimiter', () => {
  it('lets a sender spend its burst at once, then refuses naming the time until its next token', () => {
    const { limits } = limiter(20, 100);
    expect(spend(limits, 'p1', 100)).toBe(100);
    expect(limits.take('p1')).toEqual({ ok: false, retryAfterMs: 50 });
  });

  it('gives tokens back at the rate, never more than the burst, and rounds the retry time up', () => {
    const { limits, advance } = limiter(3, 2);
    expect(spend(limits, 'p1', 5)).toBe(2);
    expect(limits.take('p1')).toEqual({ ok: false, retryAfterMs: 334 });
    advance(200);
    expect(limits.take('p1')).toEqual({ ok: false, retryAfterMs: 134 });
    advance(134);
    expect(limits.take('p1')).toEqual({ ok: true });
    advance(60_000); // an hour's worth of refill still holds only the burst
    expect(spend(limits, 'p1', 5)).toBe(2);
  });

  it('keeps each sender to its own bucket', () => {
    const { limits } = limiter(1, 3);
    expect(spend(limits, 'p1', 10)).toBe(3);
    expect(spend(limits, 'overseer', 10)).toBe(3);
    expect(limits.take('p2')).toEqual({ ok: true });
  });

  it('neither refills nor takes away when the clock steps back, and refills from the latest time seen', () => {
    const { limits, set } = limiter(10, 5);
    set(1_000);
    expect(spend(limits, 'p1', 5)).toBe(5);
    set(0);
    expect(limits.take('p1')).toEqual({ ok: false, retryAfterMs: 100 });
    set(1_050);
    expect(limits.take('p1')).toEqual({ ok: false, retryAfterMs: 50 });
    set(1_100);
    expect(limits.take('p1')).toEqual({ ok: true });
  });

  it('sweeps full buckets once the table has doubled, keeping those still refilling', () => {
    const { limits, advance } = limiter(1, 2);
    for (let i = 0; i < 100; i += 1) limits.take(`old${i}`);
    advance(5_000); // every old bucket is full again
    limits.take('busy');
    limits.take('busy');
    for (let i = 0; i < 27; i += 1) limits.take(`new${i}`);
    expect(limits.tracked).toBe(28); // the sweep at 128 kept only the buckets still short of full
    expect(limits.take('busy').ok).toBe(false);
  });
});
