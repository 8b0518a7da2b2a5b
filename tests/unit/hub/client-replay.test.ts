/**
 * What a bridged client's session carries to a new server (src/hub/client-replay.ts). Covers:
 * - the client's initialize, initialized, subscriptions in force and last logging/setLevel are
 *   replayed, in that order, the message being handled left out;
 * - a later setLevel replaces an earlier one; an unsubscribe drops its subscription;
 * - logging/setLevel, like the reads, may be re-sent when its first attempt may have run; a tool
 *   call may not.
 */
import { describe, expect, it } from 'vitest';
import { ClientReplay, safeToResend } from '../../../src/hub/client-replay.js';

const line = (method: string, params?: Record<string, unknown>, id?: number): string => JSON.stringify({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, ...(params ? { params } : {}) });

describe('client replay', () => {
  it('replays initialize, initialized, the subscriptions in force and the last setLevel, the pending message left out', () => {
    const replay = new ClientReplay();
    const initialize = line('initialize', { protocolVersion: '2025-11-25' }, 1);
    const initialized = line('notifications/initialized');
    const debug = line('logging/setLevel', { level: 'debug' }, 2);
    const subscribe = line('resources/subscribe', { uri: 'majordomus://rule/a' }, 3);
    const info = line('logging/setLevel', { level: 'info' }, 4);
    for (const each of [initialize, initialized, debug, subscribe, line('tools/call', { name: 'x' }, 5), info]) replay.remember(each);
    expect(replay.lines(null)).toEqual([initialize, initialized, subscribe, info]);
    replay.remember(line('resources/unsubscribe', { uri: 'majordomus://rule/a' }, 6));
    expect(replay.lines(info)).toEqual([initialize, initialized]);
  });

  it('lets logging/setLevel be re-sent, and never a tool call', () => {
    expect(safeToResend(line('logging/setLevel', { level: 'error' }, 1))).toBe(true);
    expect(safeToResend(line('tools/call', { name: 'majordomus_claim' }, 2))).toBe(false);
  });
});
