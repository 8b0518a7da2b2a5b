/**
 * The one logger. Every line goes to stderr: stdout of `mcp` carries protocol frames only.
 * `MAJORDOMUS_LOG=debug|info|warn|error` sets the threshold (default info).
 *
 * Every line is also published, whatever that threshold, as a `LogRecord` on one process-wide
 * channel: a thread that serves MCP sessions subscribes (`onLogRecord`) and each session forwards
 * what its client asked for as `notifications/message` (src/mcp/logging.ts). The channel is a
 * `BroadcastChannel`, which reaches every thread of the process: a warning of the layer build
 * worker, the harness thread or the gateway on the HTTP thread reaches the owner's stdio client
 * and the `/mcp` sessions alike, no thread relays for another, and posting never waits on a reader
 * (invariant 3: no log line holds up the owner's stdio).
 */
import { BroadcastChannel } from 'node:worker_threads';
import { settings, type LogLevel } from './settings.js';

export type { LogLevel };

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** One line of the log, as its subscribers receive it. */
export interface LogRecord {
  level: LogLevel;
  message: string;
}

/** The channel's name: every thread of the process opens it by this name. */
const CHANNEL = 'majordomus:log';

function threshold(): number {
  try {
    return LEVELS[settings().logLevel];
  } catch {
    return LEVELS.info; // the malformed variable is reported by the command line
  }
}

const minimum = threshold();

/** This thread's end for publishing, opened at the first line; it never keeps the thread alive. */
let publisher: BroadcastChannel | null = null;

function publish(record: LogRecord): void {
  if (publisher === null) {
    publisher = new BroadcastChannel(CHANNEL);
    publisher.unref();
  }
  try {
    publisher.postMessage(record);
  } catch {
    // A thread that is ending may have lost its channel; stderr still has the line.
  }
}

function write(level: LogLevel, message: string): void {
  if (LEVELS[level] >= minimum) process.stderr.write(`majordomus ${level}: ${message}\n`);
  publish({ level, message });
}

export const log = {
  debug: (message: string): void => write('debug', message),
  info: (message: string): void => write('info', message),
  warn: (message: string): void => write('warn', message),
  error: (message: string): void => write('error', message),
};

/** Where log records go in this thread: a subscriber each. */
const listeners = new Set<(record: LogRecord) => void>();
/** This thread's end for reading, open while it has a subscriber. */
let reader: BroadcastChannel | null = null;

function isLogRecord(value: unknown): value is LogRecord {
  const record = value as Partial<LogRecord> | null;
  return typeof record === 'object' && record !== null && typeof record.message === 'string' && typeof record.level === 'string' && record.level in LEVELS;
}

/**
 * Calls `listener` with every line logged in any thread of this process from now on (this
 * thread's too, asynchronously); answers the unsubscribe. Never keeps the thread alive.
 */
export function onLogRecord(listener: (record: LogRecord) => void): () => void {
  if (reader === null) {
    const opened = new BroadcastChannel(CHANNEL);
    opened.unref();
    opened.onmessage = (event: unknown) => {
      const { data } = event as { data: unknown };
      if (!isLogRecord(data)) return;
      for (const each of [...listeners]) each(data);
    };
    reader = opened;
  }
  listeners.add(listener);
  return () => {
    if (!listeners.delete(listener) || listeners.size > 0) return;
    reader?.close();
    reader = null;
  };
}
