/**
 * MCP logging of one session (src/mcp/logging.ts, src/mcp/log-throttle.ts), over a fake log source.
 * Covers:
 * - initialize declares the `logging` capability;
 * - logging/setLevel answers {} for each of the eight RFC 5424 levels; a missing or unknown level
 *   is -32602 naming the levels, and the level in force stays;
 * - before any setLevel the session sends warning and above (info and debug stay back);
 * - at a level, lines at or above it are sent as notifications/message {level, logger, data}, the
 *   logger's `warn` spelled `warning`; below it nothing;
 * - nothing is sent without an attached stream, nor after close() (the source is unsubscribed);
 * - the bound: at most `burst` lines a window, a repeat within the window is not sent again, and
 *   one summary at the window's end names what was held back, at the most severe held level;
 *   the next window sends again.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LogRecord } from '../../../src/platform/log.js';
import { heldBackLine, LOGGER, MCP_LOG_LEVELS, SessionLogging, type LogSource } from '../../../src/mcp/logging.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';
import type { JsonRpcNotification } from '../../../src/platform/jsonrpc.js';

function backend(): McpBackend {
  return {
    tools: { tools: [], capabilityOf: () => undefined, resources: [] },
    invoke: async () => ({ ok: true, json: '{}' }),
    objects: () => [],
    object: () => undefined,
    join: async () => ({ peerId: 'p1', instructions: '' }),
    leave: () => undefined,
    instructions: async () => '',
  };
}

/** A log source a test writes to, and whether anyone listens. */
function fakeSource(): { source: LogSource; emit(record: LogRecord): void; listeners(): number } {
  const listeners = new Set<(record: LogRecord) => void>();
  return {
    source: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit: (record) => {
      for (const listener of listeners) listener(record);
    },
    listeners: () => listeners.size,
  };
}

async function openSession(): Promise<{ session: McpSession; sent: JsonRpcNotification[]; emit(record: LogRecord): void; listeners(): number }> {
  const { source, emit, listeners } = fakeSource();
  const session = new McpSession(backend(), { logs: source });
  const sent: JsonRpcNotification[] = [];
  session.attachStream((frame) => sent.push(frame));
  await session.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  return { session, sent, emit, listeners };
}

const setLevel = (session: McpSession, level: unknown) => session.handle({ jsonrpc: '2.0', id: 9, method: 'logging/setLevel', params: { level } });

describe('MCP logging of a session', () => {
  it('declares the logging capability at initialize', async () => {
    const session = new McpSession(backend());
    const answer = await session.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } });
    expect(answer?.result).toMatchObject({ capabilities: { logging: {} } });
  });

  it('answers logging/setLevel with {} for each of the eight levels', async () => {
    const { session } = await openSession();
    for (const level of MCP_LOG_LEVELS) expect(await setLevel(session, level)).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });

  it('refuses a missing or unknown level with -32602 naming the levels, keeping the level in force', async () => {
    const { session, sent, emit } = await openSession();
    await setLevel(session, 'error');
    for (const level of ['verbose', 'WARNING', 3, undefined]) {
      const answer = await setLevel(session, level);
      expect(answer).toMatchObject({ id: 9, error: { code: -32602 } });
      expect(answer?.error?.message).toContain('debug, info, notice, warning, error, critical, alert, emergency');
    }
    emit({ level: 'warn', message: 'still below error' });
    expect(sent).toEqual([]);
  });

  it('sends warning and above before the client sets a level', async () => {
    const { sent, emit } = await openSession();
    emit({ level: 'debug', message: 'a debug line' });
    emit({ level: 'info', message: 'an info line' });
    emit({ level: 'warn', message: 'the lease is gone; publishing it again' });
    emit({ level: 'error', message: 'the layer build worker failed' });
    expect(sent).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: LOGGER, data: 'the lease is gone; publishing it again' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', logger: LOGGER, data: 'the layer build worker failed' } },
    ]);
  });

  it('sends what is at or above the level set, and nothing below it', async () => {
    const { session, sent, emit } = await openSession();
    await setLevel(session, 'debug');
    emit({ level: 'debug', message: 'd' });
    emit({ level: 'info', message: 'i' });
    await setLevel(session, 'error');
    emit({ level: 'warn', message: 'w' });
    emit({ level: 'error', message: 'e' });
    await setLevel(session, 'critical');
    emit({ level: 'error', message: 'e2' });
    expect(sent.map((frame) => frame.params)).toEqual([
      { level: 'debug', logger: LOGGER, data: 'd' },
      { level: 'info', logger: LOGGER, data: 'i' },
      { level: 'error', logger: LOGGER, data: 'e' },
    ]);
  });

  it('sends nothing without a stream, and unsubscribes from its source when closed', async () => {
    const { source, emit, listeners } = fakeSource();
    const session = new McpSession(backend(), { logs: source });
    expect(listeners()).toBe(1);
    emit({ level: 'error', message: 'nobody hears this' });
    const sent: JsonRpcNotification[] = [];
    session.attachStream((frame) => sent.push(frame));
    session.close();
    expect(listeners()).toBe(0);
    emit({ level: 'error', message: 'after close' });
    expect(sent).toEqual([]);
  });
});

describe('the bound on a session\'s log stream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends at most the burst in a window, a repeat once, then one summary at the most severe held level', () => {
    const sent: Array<Record<string, unknown>> = [];
    const logging = new SessionLogging((params) => sent.push(params), { burst: 3, windowMs: 1_000, now: () => Date.now() });
    logging.deliver({ level: 'warn', message: 'provider stalled' });
    logging.deliver({ level: 'warn', message: 'provider stalled' }); // a repeat
    logging.deliver({ level: 'warn', message: 'two' });
    logging.deliver({ level: 'warn', message: 'three' });
    logging.deliver({ level: 'error', message: 'four' }); // over the burst
    logging.deliver({ level: 'warn', message: 'five' });
    expect(sent.map((p) => p.data)).toEqual(['provider stalled', 'two', 'three']);
    vi.advanceTimersByTime(1_000);
    expect(sent).toHaveLength(4);
    expect(sent[3]).toEqual({ level: 'error', logger: LOGGER, data: heldBackLine({ held: 3, repeats: 1, level: 'error' }, 3, 1_000) });
    expect(sent[3]?.data).toBe("held back 3 log lines (at most 3 log lines in 1 s, 1 of them repeats of a line already sent); the server's stderr has every line");
    logging.deliver({ level: 'warn', message: 'provider stalled' });
    expect(sent.map((p) => p.data).slice(4)).toEqual(['provider stalled']);
  });

  it('sends no summary when nothing was held back, nor after close', () => {
    const sent: Array<Record<string, unknown>> = [];
    const logging = new SessionLogging((params) => sent.push(params), { burst: 1, windowMs: 1_000, now: () => Date.now() });
    logging.deliver({ level: 'warn', message: 'one' });
    vi.advanceTimersByTime(5_000);
    expect(sent).toHaveLength(1);
    logging.deliver({ level: 'warn', message: 'two' });
    logging.deliver({ level: 'warn', message: 'three' });
    logging.close();
    vi.advanceTimersByTime(5_000);
    expect(sent.map((p) => p.data)).toEqual(['one', 'two']);
  });
});
