/**
 * The gateway's usage records on their way to the harness thread (src/http/usage-reports.ts):
 * - the records of one turn of the loop leave together, in the order they were reported;
 * - a later turn's records leave in a call of their own; nothing is sent for a turn without any.
 */
import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../../src/gateway/usage.js';
import { usageReports } from '../../../src/http/usage-reports.js';

const record = (task: string): UsageRecord => ({ task, key: 'lease', provider: 'p', model: 'm', prompt_tokens: 1, completion_tokens: 2, failovers: 0, ok: true, charge: null });
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('usageReports', () => {
  it('sends the records of one turn together, in order, and a later turn\'s apart', async () => {
    const sent: string[][] = [];
    const report = usageReports((records) => sent.push(records.map((r) => r.task as string)));
    report(record('a'));
    report(record('b'));
    report(record('c'));
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([['a', 'b', 'c']]);
    report(record('d'));
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual([['a', 'b', 'c'], ['d']]);
  });
});
