/**
 * The environment of this process, read here and nowhere else (a test fails on a `process.env`
 * read in any other module). Every variable a process of ours reads is declared here, in a
 * section per kind of process:
 *
 * - every command: the `MAJORDOMUS_*` settings, read once at the edge and frozen; a malformed
 *   value is refused at start (`MAJ_USAGE`, exit 2) instead of being silently replaced. Among them
 *   the test settings (`MAJORDOMUS_TEST_*`), each shortening one protocol timer;
 * - `majordomus exec`: what the harness stamps on it (its state directory, its task);
 * - `guard run`, from a git hook: the guard's setting and the committer's peer id;
 * - `majordomus open`: whether there is a display to open a page on;
 * - secrets kept out of command lines and files, by the name of their variable (a provider's
 *   `api_key_env`, `exec --api-key-env`);
 * - what a child process inherits: src/platform/child-env.ts builds every child's environment
 *   from `inheritableEnvironment()`.
 *
 * No dependencies beyond the error catalogue: the bridge path reads it too. Threads do not read
 * the environment again: the main thread hands them what they need (the gateway's secrets aside).
 */
import { availableParallelism } from 'node:os';
import { MajordomusError } from './errors.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The libraries the HTTP thread can serve with: uWebSockets.js, or node:http (with `ws`). */
export const HTTP_ENGINES = ['uws', 'node'] as const;
export type HttpEngine = (typeof HTTP_ENGINES)[number];

export interface Settings {
  /** `MAJORDOMUS_LOG`: the log threshold. */
  logLevel: LogLevel;
  /** `MAJORDOMUS_POOL_THREADS`: capability pool size (default: cores − 1, at least 1). */
  poolThreads: number;
  /** `MAJORDOMUS_ANSWER_CACHE=0` turns off the HTTP thread's memory of pure-query answers. */
  answerCache: boolean;
  /** `MAJORDOMUS_HTTP_NICE`: nice value of the HTTP and pool threads (0 disables). */
  httpNice: number;
  /**
   * `MAJORDOMUS_HTTP_ENGINE`: `uws` or `node` forces the HTTP engine; null (unset): uWebSockets.js
   * when its binary loads on this system, else node:http (src/http/engine.ts).
   */
  httpEngine: HttpEngine | null;
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
  /**
   * `MAJORDOMUS_SPAWN_DEPTH`: this process's delegation depth, stamped by the harness that spawned
   * it (0–999); null when unset (a server then has depth 0, and a bridge reports none).
   */
  spawnDepth: number | null;
  /** `MAJORDOMUS_MESSAGE_MEMORY_BYTES`: the text of messages held in memory; older ones are read back from the journal. */
  messageMemoryBytes: number;
  /** `MAJORDOMUS_MESSAGE_RATE`: messages a second one sender (a peer, the overseer) may send, sustained. */
  messageRate: number;
  /** `MAJORDOMUS_MESSAGE_BURST`: messages one sender may send at once before its rate applies. */
  messageBurst: number;
  /**
   * `MAJORDOMUS_BOARD`: `repository` (default) shares the board with every worktree of the
   * repository on this machine (and, with a federation URL, every checkout on the broker);
   * `checkout` keeps it to this checkout alone (docs/SCALE.md).
   */
  boardScope: 'repository' | 'checkout';
  /** `MAJORDOMUS_FEDERATION_URL`: the NATS server to federate the board through (wins over the manifest's). */
  federationUrl: string | null;
  /**
   * `MAJORDOMUS_PRESENCE_TTL_MS`: how long another checkout counts as alive after its last
   * presence (its heartbeat is a third of it); its claims stop refusing past it.
   */
  presenceTtlMs: number;
  /**
   * `MAJORDOMUS_CLOCK_SKEW_MS` (tests and demos): shifts this process's idea of the time as a
   * machine whose clock is off would see it (a signed integer of milliseconds); the shared board
   * decides with the broker's clock whatever this says.
   */
  clockSkewMs: number;
  /**
   * Test settings: each shortens one protocol timer, so that a test can reach what follows it
   * without waiting the real time; every one of these timers keeps a test at its real value
   * (docs/MCP.md, "Environment"). Nobody else needs them.
   *
   * `MAJORDOMUS_TEST_WATCHDOG_MS`: how long a bridge's request may be outstanding before the bridge
   * asks its server's `GET /` whether it is still alive (src/shared/bridge.ts).
   */
  watchdogMs: number;
  /**
   * `MAJORDOMUS_TEST_LIVE_SERVER_WAIT_MS` (test setting): how long a process that found the lease
   * dead but the server lock held waits for the holder's lease before it takes over as if the
   * holder were hung (src/shared/election.ts).
   */
  liveServerWaitMs: number;
  /**
   * `MAJORDOMUS_TEST_KILL_GRACE_MS` (test setting): how long a stopped agent's process group has
   * between SIGTERM and SIGKILL (src/harness/process.ts).
   */
  killGraceMs: number;
}

export const DEFAULTS = {
  idleSessionMs: 90_000,
  pingMs: 20_000,
  maxSessions: 64,
  httpNice: 10,
  messageMemoryBytes: 16 * 1024 * 1024,
  messageRate: 20,
  messageBurst: 100,
  presenceTtlMs: 30_000,
  // The protocol's timers, which the test settings shorten.
  watchdogMs: 5_000,
  liveServerWaitMs: 5_000,
  killGraceMs: 5_000,
} as const;

/** The largest delegation depth a variable or a bridge's header may carry (three digits). */
export const MAX_SPAWN_DEPTH = 999;

export type Env = Readonly<Record<string, string | undefined>>;

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

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** Reads the settings from `env`; throws `MAJ_USAGE` naming the first malformed variable. */
export function readSettings(env: Env = process.env): Settings {
  const level = env.MAJORDOMUS_LOG;
  if (level !== undefined && level !== '' && !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw invalid('MAJORDOMUS_LOG', level, `one of ${LOG_LEVELS.join(', ')}`);
  }
  const cache = env.MAJORDOMUS_ANSWER_CACHE;
  if (cache !== undefined && cache !== '' && cache !== '0' && cache !== '1') throw invalid('MAJORDOMUS_ANSWER_CACHE', cache, '0 or 1');
  const engine = env.MAJORDOMUS_HTTP_ENGINE;
  if (engine !== undefined && engine !== '' && !(HTTP_ENGINES as readonly string[]).includes(engine)) {
    throw invalid('MAJORDOMUS_HTTP_ENGINE', engine, `one of ${HTTP_ENGINES.join(', ')}`);
  }
  const fault = env.MAJORDOMUS_FAULT;
  if (fault !== undefined && fault !== '' && !/^capability:[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(fault)) {
    throw invalid('MAJORDOMUS_FAULT', fault, 'capability:<namespace.local>');
  }
  const scope = env.MAJORDOMUS_BOARD;
  if (scope !== undefined && scope !== '' && scope !== 'repository' && scope !== 'checkout') throw invalid('MAJORDOMUS_BOARD', scope, 'repository or checkout');
  const federation = nonEmpty(env.MAJORDOMUS_FEDERATION_URL);
  if (federation !== null && !/^(nats|tls):\/\/\S+$|^[A-Za-z0-9.-]+:\d+$/.test(federation)) throw invalid('MAJORDOMUS_FEDERATION_URL', federation, 'a NATS URL such as nats://host:4222');
  const skew = env.MAJORDOMUS_CLOCK_SKEW_MS;
  if (skew !== undefined && skew !== '' && !/^-?\d{1,12}$/.test(skew)) throw invalid('MAJORDOMUS_CLOCK_SKEW_MS', skew, 'a signed integer of milliseconds');
  return Object.freeze({
    logLevel: (level || 'info') as LogLevel,
    poolThreads: integer(env, 'MAJORDOMUS_POOL_THREADS', Math.max(1, availableParallelism() - 1), 1, 64),
    answerCache: cache !== '0',
    httpNice: integer(env, 'MAJORDOMUS_HTTP_NICE', DEFAULTS.httpNice, 0, 19),
    httpEngine: engine ? (engine as HttpEngine) : null,
    idleSessionMs: integer(env, 'MAJORDOMUS_IDLE_SESSION_MS', DEFAULTS.idleSessionMs, 50, 24 * 3600_000),
    pingMs: integer(env, 'MAJORDOMUS_PING_MS', DEFAULTS.pingMs, 50, 3600_000),
    maxSessions: integer(env, 'MAJORDOMUS_MAX_SESSIONS', DEFAULTS.maxSessions, 1, 100_000),
    faultCapability: fault ? fault.slice('capability:'.length) : null,
    httpPort: env.MAJORDOMUS_HTTP_PORT ? integer(env, 'MAJORDOMUS_HTTP_PORT', 0, 0, 65_535) : null,
    spawnDepth: env.MAJORDOMUS_SPAWN_DEPTH ? integer(env, 'MAJORDOMUS_SPAWN_DEPTH', 0, 0, MAX_SPAWN_DEPTH) : null,
    messageMemoryBytes: integer(env, 'MAJORDOMUS_MESSAGE_MEMORY_BYTES', DEFAULTS.messageMemoryBytes, 0, 2 ** 40),
    messageRate: integer(env, 'MAJORDOMUS_MESSAGE_RATE', DEFAULTS.messageRate, 1, 1_000_000),
    messageBurst: integer(env, 'MAJORDOMUS_MESSAGE_BURST', DEFAULTS.messageBurst, 1, 1_000_000),
    boardScope: scope === 'checkout' ? 'checkout' : 'repository',
    federationUrl: federation,
    presenceTtlMs: integer(env, 'MAJORDOMUS_PRESENCE_TTL_MS', DEFAULTS.presenceTtlMs, 1_000, 3600_000),
    clockSkewMs: skew ? Number(skew) : 0,
    watchdogMs: integer(env, 'MAJORDOMUS_TEST_WATCHDOG_MS', DEFAULTS.watchdogMs, 50, 600_000),
    liveServerWaitMs: integer(env, 'MAJORDOMUS_TEST_LIVE_SERVER_WAIT_MS', DEFAULTS.liveServerWaitMs, 50, 600_000),
    killGraceMs: integer(env, 'MAJORDOMUS_TEST_KILL_GRACE_MS', DEFAULTS.killGraceMs, 50, 600_000),
  });
}

let current: Settings | null = null;

/** The process's settings, read on first use. */
export function settings(): Settings {
  current ??= readSettings();
  return current;
}

// ---- majordomus exec ------------------------------------------------------------------------

/** The variables the harness stamps on an executor (src/platform/child-env.ts writes them). */
export const EXECUTOR_STATE_ENV = 'MAJORDOMUS_EXECUTOR_STATE';
export const TASK_ID_ENV = 'MAJORDOMUS_TASK_ID';
export const SPAWN_DEPTH_ENV = 'MAJORDOMUS_SPAWN_DEPTH';

/** What `majordomus exec` reads of its environment; a person running it by hand may set it too. */
export interface ExecutorSettings {
  /**
   * `MAJORDOMUS_EXECUTOR_STATE`: the directory holding the conversations. The harness points it at
   * the session's own directory, so a session's conversation lives and is reaped with it.
   * Unset: `<root>/<local>/state/executor/`.
   */
  stateDir: string | null;
  /**
   * `MAJORDOMUS_TASK_ID`: the task this turn works for, sent as `X-Majordomus-Task` so the gateway
   * counts usage per task. Unset: no header.
   */
  taskId: string | null;
}

/** The executor's settings from `env`, frozen. */
export function readExecutorSettings(env: Env = process.env): ExecutorSettings {
  return Object.freeze({ stateDir: nonEmpty(env[EXECUTOR_STATE_ENV]), taskId: nonEmpty(env[TASK_ID_ENV]) });
}

// ---- guard run (a git hook) -----------------------------------------------------------------

export const GUARD_SETTINGS = ['refuse', 'warn', 'off'] as const;
export type GuardSetting = (typeof GUARD_SETTINGS)[number];

/** Names the committer to the guard (docs/GUARD.md): a peer id, never inherited by an agent. */
export const PEER_ENV = 'MAJORDOMUS_PEER';

const PEER_ID = /^p[1-9]\d{0,8}$/;

/** `MAJORDOMUS_GUARD`, validated: the installed hook sets its default; unset means refuse. */
export function guardSetting(env: Env = process.env): GuardSetting {
  const value = env.MAJORDOMUS_GUARD;
  if (value === undefined || value === '') return 'refuse';
  if ((GUARD_SETTINGS as readonly string[]).includes(value)) return value as GuardSetting;
  throw new MajordomusError('MAJ_USAGE', `MAJORDOMUS_GUARD=${JSON.stringify(value)} is not one of ${GUARD_SETTINGS.join(', ')}`);
}

/** `MAJORDOMUS_PEER`, validated: a peer id such as `p3`, or null when unset or empty. */
export function peerFromEnvironment(env: Env = process.env): string | null {
  const value = env[PEER_ENV];
  if (value === undefined || value === '') return null;
  if (!PEER_ID.test(value)) {
    throw new MajordomusError('MAJ_USAGE', `MAJORDOMUS_PEER=${JSON.stringify(value)} is not a peer id such as p3 (name a peer the peers list shows, or unset it)`);
  }
  return value;
}

// ---- majordomus open ------------------------------------------------------------------------

/** `DISPLAY` or `WAYLAND_DISPLAY`: the graphical session a page can be opened in; null without one. */
export function graphicalDisplay(env: Env = process.env): string | null {
  return nonEmpty(env.DISPLAY) ?? nonEmpty(env.WAYLAND_DISPLAY);
}

// ---- secrets --------------------------------------------------------------------------------

/**
 * The secret in the variable `name` (a provider's `api_key_env`, `exec --api-key-env`): kept out
 * of the command line and of files so it never shows in a process list. Null when unset or empty.
 */
export function secretFromEnv(name: string, env: Env = process.env): string | null {
  return nonEmpty(env[name]);
}

/**
 * The same look-up as a read-only record, for code that takes one (the gateway's config parser,
 * whose tests pass their own): a variable is found by its name, the environment cannot be listed.
 */
export const SECRETS: Env = new Proxy(Object.freeze({}) as Env, {
  get: (_target, name) => (typeof name === 'string' ? (secretFromEnv(name) ?? undefined) : undefined),
});

// ---- children -------------------------------------------------------------------------------

/**
 * A copy of this process's environment as it is now, for src/platform/child-env.ts to build a
 * child's from. Read at each spawn, not frozen: what a child inherits is what the process has.
 */
export function inheritableEnvironment(): Record<string, string | undefined> {
  return { ...process.env };
}
