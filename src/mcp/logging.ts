/**
 * MCP logging for one session: the level its client asked for (`logging/setLevel`), and the
 * server's own log lines — from any thread of the process (src/platform/log.ts) — sent as
 * `notifications/message` when they are at or above it, within the bound of src/mcp/log-throttle.ts.
 *
 * Until the client sets a level the session sends `warning` and above (MCP lets the server choose
 * then): what a user should hear about anyway — a broken layer edit, a lease problem, a stalled
 * provider — without the info and debug lines a busy server writes.
 */
import type { LogLevel, LogRecord } from '../platform/log.js';
import { RPC } from '../platform/jsonrpc.js';
import { LogThrottle, type HeldBack } from './log-throttle.js';
import { RequestError, type Params } from './request.js';

/** RFC 5424's levels as MCP names them, least severe first. */
export const MCP_LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

/** What a session sends before its client sets a level. */
export const DEFAULT_LOG_LEVEL: McpLogLevel = 'warning';
/** At most this many log notifications per window and session (a summary of the rest follows)… */
export const LOG_BURST = 10;
/** …per this many milliseconds. */
export const LOG_WINDOW_MS = 10_000;
/** The `logger` every notification names. */
export const LOGGER = 'majordomus';

/** Where a session's log records come from: subscribes a listener, answers the unsubscribe. */
export type LogSource = (listener: (record: LogRecord) => void) => () => void;

/** The logger's levels as MCP spells them. */
const MCP_LEVEL_OF: Record<LogLevel, McpLogLevel> = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' };

function severity(level: string): number {
  return MCP_LOG_LEVELS.indexOf(level as McpLogLevel);
}

function isMcpLogLevel(value: unknown): value is McpLogLevel {
  return typeof value === 'string' && (MCP_LOG_LEVELS as readonly string[]).includes(value);
}

/** The summary of a window's held-back lines. */
export function heldBackLine({ held, repeats }: HeldBack, burst: number, windowMs: number): string {
  const lines = (n: number): string => `${n} log line${n === 1 ? '' : 's'}`;
  const repeated = repeats > 0 ? `, ${repeats} of them repeats of a line already sent` : '';
  return `held back ${lines(held)} (at most ${lines(burst)} in ${windowMs / 1000} s${repeated}); the server's stderr has every line`;
}

export interface SessionLoggingOptions {
  burst?: number;
  windowMs?: number;
  now?: () => number;
}

export class SessionLogging {
  #level: McpLogLevel = DEFAULT_LOG_LEVEL;
  readonly #send: (params: Record<string, unknown>) => void;
  readonly #throttle: LogThrottle;

  /** `send` writes a `notifications/message` with these params on the session's stream. */
  constructor(send: (params: Record<string, unknown>) => void, options: SessionLoggingOptions = {}) {
    this.#send = send;
    const windowMs = options.windowMs ?? LOG_WINDOW_MS;
    const burst = options.burst ?? LOG_BURST;
    this.#throttle = new LogThrottle({
      burst,
      windowMs,
      severity,
      onHeldBack: (held) => this.#send({ level: held.level, logger: LOGGER, data: heldBackLine(held, burst, windowMs) }),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  get level(): McpLogLevel {
    return this.#level;
  }

  /** `logging/setLevel {level}`: answered `{}`; a missing or unknown level is invalid params. */
  setLevel(params: Params): Record<string, never> {
    const { level } = params;
    if (!isMcpLogLevel(level)) {
      throw new RequestError(RPC.invalidParams, `Invalid params: logging/setLevel needs a level, one of ${MCP_LOG_LEVELS.join(', ')}`);
    }
    this.#level = level;
    return {};
  }

  /** A line of the server's log: sent when at or above the session's level and within the bound. */
  deliver(record: LogRecord): void {
    const level = MCP_LEVEL_OF[record.level];
    if (severity(level) < severity(this.#level)) return;
    if (!this.#throttle.admit(level, record.message)) return;
    this.#send({ level, logger: LOGGER, data: record.message });
  }

  /** Ends the session's logging: no summary is sent after this. */
  close(): void {
    this.#throttle.close();
  }
}
