/**
 * The environment settings, read once at the edge and frozen. Every `MAJORDOMUS_*` variable the
 * product reads is declared here with its default; a malformed value is refused at start
 * (`MAJ_USAGE`, exit 2) instead of being silently replaced. No dependencies: the bridge path reads
 * it too. Threads do not read the environment again: the main thread hands them what they need.
 */
import { availableParallelism } from 'node:os';
import { MajordomusError } from './errors.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Settings {
  /** `MAJORDOMUS_LOG`: the log threshold. */
  logLevel: LogLevel;
  /** `MAJORDOMUS_POOL_THREADS`: capability pool size (default: cores − 1, at least 1). */
  poolThreads: number;
  /** `MAJORDOMUS_ANSWER_CACHE=0` turns off the HTTP thread's memory of pure-query answers. */
  answerCache: boolean;
  /** `MAJORDOMUS_HTTP_NICE`: nice value of the HTTP and pool threads (0 disables). */
  httpNice: number;
  /** `MAJORDOMUS_IDLE_SESSION_MS`: idle expiry of an HTTP MCP session. */
  idleSessionMs: number;
  /** `MAJORDOMUS_PING_MS`: how often a bridge pings its server. */
  pingMs: number;
  /** `MAJORDOMUS_MAX_SESSIONS`: how many `/mcp` sessions the server keeps at once. */
  maxSessions: number;
  /**
   * `MAJORDOMUS_FAULT`: a documented fault switch for tests and demos. `capability:<id>` makes
   * that capability throw an unexpected error, which every transport must answer as `internal`.
   */
  faultCapability: string | null;
  /**
   * `MAJORDOMUS_HTTP_PORT`: the shared server's port when `--http-port`/`--port` is not given
   * (0 = any free port; null: the default, 8741). Client configs start `mcp` without arguments, so
   * this is how a user (or a test) moves every server of a machine off the default port.
   */
  httpPort: number | null;
  /** `MAJORDOMUS_MESSAGE_MEMORY_BYTES`: the text of messages held in memory; older ones are read back from the journal. */
  messageMemoryBytes: number;
  /** `MAJORDOMUS_MESSAGE_RATE`: messages a second one sender (a peer, the overseer) may send, sustained. */
  messageRate: number;
  /** `MAJORDOMUS_MESSAGE_BURST`: messages one sender may send at once before its rate applies. */
  messageBurst: number;
}

export const DEFAULTS = {
  idleSessionMs: 90_000,
  pingMs: 20_000,
  maxSessions: 64,
  httpNice: 10,
  messageMemoryBytes: 16 * 1024 * 1024,
  messageRate: 20,
  messageBurst: 100,
} as const;

type Env = Readonly<Record<string, string | undefined>>;

function invalid(name: string, value: string, wanted: string): MajordomusError {
  return new MajordomusError('MAJ_USAGE', `${name}=${JSON.stringify(value)} is not ${wanted}`);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw invalid(name, text, `an integer ${min}–${max}`);
  return value;
}

/** Reads the settings from `env`; throws `MAJ_USAGE` naming the first malformed variable. */
export function readSettings(env: Env = process.env): Settings {
  const level = env.MAJORDOMUS_LOG;
  if (level !== undefined && level !== '' && !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw invalid('MAJORDOMUS_LOG', level, `one of ${LOG_LEVELS.join(', ')}`);
  }
  const cache = env.MAJORDOMUS_ANSWER_CACHE;
  if (cache !== undefined && cache !== '' && cache !== '0' && cache !== '1') throw invalid('MAJORDOMUS_ANSWER_CACHE', cache, '0 or 1');
  const fault = env.MAJORDOMUS_FAULT;
  if (fault !== undefined && fault !== '' && !/^capability:[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(fault)) {
    throw invalid('MAJORDOMUS_FAULT', fault, 'capability:<namespace.local>');
  }
  return Object.freeze({
    logLevel: (level || 'info') as LogLevel,
    poolThreads: integer(env, 'MAJORDOMUS_POOL_THREADS', Math.max(1, availableParallelism() - 1), 1, 64),
    answerCache: cache !== '0',
    httpNice: integer(env, 'MAJORDOMUS_HTTP_NICE', DEFAULTS.httpNice, 0, 19),
    idleSessionMs: integer(env, 'MAJORDOMUS_IDLE_SESSION_MS', DEFAULTS.idleSessionMs, 50, 24 * 3600_000),
    pingMs: integer(env, 'MAJORDOMUS_PING_MS', DEFAULTS.pingMs, 50, 3600_000),
    maxSessions: integer(env, 'MAJORDOMUS_MAX_SESSIONS', DEFAULTS.maxSessions, 1, 100_000),
    faultCapability: fault ? fault.slice('capability:'.length) : null,
    httpPort: env.MAJORDOMUS_HTTP_PORT ? integer(env, 'MAJORDOMUS_HTTP_PORT', 0, 0, 65_535) : null,
    messageMemoryBytes: integer(env, 'MAJORDOMUS_MESSAGE_MEMORY_BYTES', DEFAULTS.messageMemoryBytes, 0, 2 ** 40),
    messageRate: integer(env, 'MAJORDOMUS_MESSAGE_RATE', DEFAULTS.messageRate, 1, 1_000_000),
    messageBurst: integer(env, 'MAJORDOMUS_MESSAGE_BURST', DEFAULTS.messageBurst, 1, 1_000_000),
  });
}

let current: Settings | null = null;

/** The process's settings, read on first use. */
export function settings(): Settings {
  current ??= readSettings();
  return current;
}
