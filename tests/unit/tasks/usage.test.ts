/**
 * The usage table the gateway's records are summed in (the harness thread):
 * - in total, by provider, by caller (`lease` or a key's name) and by task with its providers;
 * - cost and saved summed over the priced requests only, `priced_requests` saying how many; a row
 *   without a priced request shows no cost at all; money rounded to a millionth;
 * - one currency: a request priced in another after the first is counted without its cost;
 * - a task's usage carries the currency of its cost.
 */
import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../../src/gateway/usage.js';
import { UsageTable } from '../../../src/tasks/usage.js';

function record(overrides: Partial<UsageRecord>): UsageRecord {
  return { task: null, key: 'lease', provider: 'local', model: 'q7', prompt_tokens: 100, completion_tokens: 10, failovers: 0, ok: true, charge: null, ...overrides };
}

const charge = (cost: number, currency = 'USD', saved: number | null = null) => ({ cost, currency, saved, reference: saved === null ? null : 'sonnet' });

describe('the usage table', () => {
  it('sums requests in total, by provider, by key and by task, with cost where priced', () => {
    const table = new UsageTable();
    table.record(record({ task: 't1', charge: charge(0.1, 'USD', 0.9) }));
    table.record(record({ task: 't1', provider: 'hosted', key: 'friend', ok: false, failovers: 1, charge: charge(0.2, 'USD', 0.3) }));
    table.record(record({ key: 'friend', provider: 'other' }));
    const snapshot = table.snapshot();
    expect(snapshot).toMatchObject({ currency: 'USD', reference: 'sonnet' });
    expect(snapshot.total).toEqual({ requests: 3, failed: 1, prompt_tokens: 300, completion_tokens: 30, failovers: 1, priced_requests: 2, cost: 0.3, saved: 1.2 });
    expect(snapshot.keys).toEqual({
      lease: { requests: 1, failed: 0, prompt_tokens: 100, completion_tokens: 10, failovers: 0, priced_requests: 1, cost: 0.1, saved: 0.9 },
      friend: { requests: 2, failed: 1, prompt_tokens: 200, completion_tokens: 20, failovers: 1, priced_requests: 1, cost: 0.2, saved: 0.3 },
    });
    expect(snapshot.providers.other).toEqual({ requests: 1, failed: 0, prompt_tokens: 100, completion_tokens: 10, failovers: 0 });
    expect(table.task('t1')).toMatchObject({ requests: 2, cost: 0.3, currency: 'USD', by_provider: { local: { cost: 0.1 }, hosted: { cost: 0.2 } } });
    expect(table.task('nope')).toBeNull();
  });

  it('counts a request priced in another currency than the first without its cost', () => {
    const table = new UsageTable();
    table.record(record({ charge: charge(1, 'EUR') }));
    table.record(record({ charge: charge(5, 'USD') }));
    expect(table.snapshot()).toMatchObject({ currency: 'EUR', total: { requests: 2, priced_requests: 1, cost: 1 } });
  });

  it('shows no currency, reference or cost while nothing had a price', () => {
    const table = new UsageTable();
    table.record(record({ task: 't' }));
    expect(table.snapshot()).toMatchObject({ currency: null, reference: null });
    expect(table.snapshot().total).not.toHaveProperty('cost');
    expect(table.task('t')).not.toHaveProperty('currency');
  });
});
