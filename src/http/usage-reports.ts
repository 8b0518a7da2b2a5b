/**
 * The gateway's usage records on their way to the harness thread (where check_task and
 * `GET /api/v1/usage` sum them): the records of the streams that ended in one turn of the HTTP
 * thread's loop leave as one message. One message per stream (and its answer) woke the harness
 * thread, and the HTTP thread again, for every request the gateway relayed.
 */
import type { UsageRecord, UsageReport } from '../gateway/usage.js';

/** A `UsageReport` that hands `send` the records of each turn together. */
export function usageReports(send: (records: UsageRecord[]) => void): UsageReport {
  let pending: UsageRecord[] = [];
  const flush = (): void => {
    const records = pending;
    pending = [];
    send(records);
  };
  return (record) => {
    if (pending.push(record) === 1) setImmediate(flush);
  };
}
