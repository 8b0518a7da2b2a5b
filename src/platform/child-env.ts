/**
 * What every child process of ours inherits and what it is given, decided here and nowhere else
 * (STYLE.md, "One seam per safety decision"). Three kinds of child:
 *
 * - **a command run on this process's behalf** (git, the system's page opener): this process's
 *   environment as it is — inside a git hook that carries git's own variables (`GIT_INDEX_FILE`,
 *   `GIT_DIR`), which the hook's git commands must see;
 * - **a command an executor's model asked for** (its bash tool): the same, less every variable
 *   named like a secret — the executor's keys are not the model's to read;
 * - **an agent the harness starts**: this process's environment less the variables that name one
 *   process's role — whose task it is, where its conversation lives, which peer it is, how deep it
 *   was spawned — then its profile's `env`, then what the harness gives it (its depth, and an
 *   executor's task and state directory). A server started by an executor, or by a user who set
 *   `MAJORDOMUS_PEER`, must not hand that identity to every agent it spawns.
 *
 * `NODE_V8_COVERAGE` passes on purpose to the children that may run majordomus's own code — a
 * command run on this process's behalf (doctor starts a client's `majordomus mcp`) and the executor
 * — since `vitest --coverage` measures the processes the tests start through it (docs/COVERAGE.md).
 * Every other child (an agent CLI, a model's command, git) is not ours: it would only spend time
 * writing coverage that is never counted, so it does not inherit it. The lease's token never
 * travels in an environment (the opener gets a 0600 file, a bridge reads the lease), so there is
 * nothing of it to remove here.
 */
import { EXECUTOR_STATE_ENV, inheritableEnvironment, PEER_ENV, SPAWN_DEPTH_ENV, TASK_ID_ENV } from './settings.js';

export type ChildEnv = Record<string, string | undefined>;

/** Variables an agent is never handed from the process that starts it: each names one process's role. */
export const ROLE_VARIABLES: readonly string[] = [SPAWN_DEPTH_ENV, TASK_ID_ENV, EXECUTOR_STATE_ENV, PEER_ENV];

/** Names a command run for an executor's model does not inherit: the executor's own keys and tokens. */
const SECRET_VARIABLE = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)/i;

/** Where Node writes a process's coverage; only our own executable's processes are measured. */
const COVERAGE_VARIABLE = 'NODE_V8_COVERAGE';

/**
 * `env` without coverage. The name stays, set to undefined: node's child_process copies its own
 * NODE_V8_COVERAGE into a child's environment that lacks the name, and leaves out one set to
 * undefined.
 */
function withoutCoverage(env: ChildEnv): ChildEnv {
  return { ...env, [COVERAGE_VARIABLE]: undefined };
}

/** git never takes an optional lock (a read must not refresh the index) and never prompts. */
const GIT_VARIABLES: Readonly<Record<string, string>> = { GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' };

/** The environment of a command run on this process's behalf (the system's page opener). */
export function commandEnvironment(inherited: ChildEnv = inheritableEnvironment()): ChildEnv {
  return { ...inherited };
}

/** git's environment: this process's (less coverage), and never a lock or a prompt. */
export function gitEnvironment(inherited: ChildEnv = inheritableEnvironment()): ChildEnv {
  return { ...withoutCoverage(inherited), ...GIT_VARIABLES };
}

/** The environment of a command an executor's model runs: this process's less anything named like a secret (and coverage). */
export function modelCommandEnvironment(inherited: ChildEnv = inheritableEnvironment()): ChildEnv {
  return Object.fromEntries(Object.entries(withoutCoverage(inherited)).filter(([name]) => !SECRET_VARIABLE.test(name)));
}

/** What the harness gives an agent on top of what it inherits. */
export interface AgentGiven {
  /** The agent's own delegation depth (its spawner's + 1). */
  depth: number;
  /** An executor's session: the task its model requests are counted under. */
  taskId?: string;
  /** An executor's directory for its conversation (the session's own). */
  stateDir?: string;
  /** The agent is majordomus's own executable (the executor): it keeps NODE_V8_COVERAGE. */
  ours?: boolean;
}

export interface AgentEnvironment {
  env: ChildEnv;
  /** The names the profile and the harness set (what `sessionInfo.env` shows; never values). */
  names: string[];
}

/**
 * An agent's environment: `inherited` (this process's, unless a caller hands its own) less the
 * role variables (and, for an agent not ours, coverage), then the profile's `env`, then what the
 * harness gives.
 */
export function agentEnvironment(given: AgentGiven, profileEnv: Readonly<Record<string, string>> = {}, inherited: ChildEnv = inheritableEnvironment()): AgentEnvironment {
  const stamped: Record<string, string> = { [SPAWN_DEPTH_ENV]: String(given.depth) };
  if (given.taskId !== undefined) stamped[TASK_ID_ENV] = given.taskId;
  if (given.stateDir !== undefined) stamped[EXECUTOR_STATE_ENV] = given.stateDir;
  const kept = Object.fromEntries(Object.entries(given.ours === true ? inherited : withoutCoverage(inherited)).filter(([name]) => !ROLE_VARIABLES.includes(name)));
  return {
    env: { ...kept, ...profileEnv, ...stamped },
    names: [...new Set([...Object.keys(profileEnv), ...Object.keys(stamped)])].sort(),
  };
}
