/**
 * Every environment variable the executor reads, read here and nowhere else (the process-wide
 * `MAJORDOMUS_*` settings stay in src/settings.ts). The harness sets the first two when it spawns
 * `majordomus exec`; a person running it by hand may set them too.
 */

export interface ExecutorEnvironment {
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

type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** The executor's settings from `env`, frozen. */
export function readExecutorEnvironment(env: Env = process.env): ExecutorEnvironment {
  return Object.freeze({
    stateDir: nonEmpty(env.MAJORDOMUS_EXECUTOR_STATE),
    taskId: nonEmpty(env.MAJORDOMUS_TASK_ID),
  });
}

/**
 * The API key in the variable `name` (`--api-key-env NAME`: the key for `--base-url`, kept out of
 * the command line so it never shows in a process list). Null when unset or empty.
 */
export function apiKeyFrom(name: string, env: Env = process.env): string | null {
  return nonEmpty(env[name]);
}
