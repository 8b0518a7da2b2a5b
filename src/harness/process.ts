/**
 * The agent processes. Each turn runs under a small `sh` that leads its own process group (one
 * signal reaches everything the agent forks) and carries the Linux parent-death signal (set by
 * util-linux `setpriv`, which execs in place): when the harness thread that started it ends — the
 * server crashed or was SIGKILLed — the shell gets SIGUSR1 and kills its whole group, grandchildren
 * included (a parent-death signal alone would reach the agent but not what the agent forked).
 * A stop is SIGTERM to the group, a grace period, then SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { startTicksOf } from '../platform/proc.js';
import { DEFAULTS } from '../platform/settings.js';

/**
 * How long a group gets between SIGTERM and SIGKILL, unless the table is given another
 * (MAJORDOMUS_TEST_KILL_GRACE_MS reaches it through the harness thread's start data).
 */
export const KILL_GRACE_MS: number = DEFAULTS.killGraceMs;

const SETPRIV_CANDIDATES = ['/usr/bin/setpriv', '/bin/setpriv'];
let setprivPath: string | null | undefined;

/** util-linux `setpriv`, when this machine has it (Linux). */
function setpriv(): string | null {
  if (setprivPath === undefined) {
    setprivPath = process.platform === 'linux' ? (SETPRIV_CANDIDATES.find(isExecutable) ?? null) : null;
  }
  return setprivPath;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path `command` runs as: itself when it has a slash, else the first match on `path` (the child's PATH). */
export function resolveCommand(command: string, cwd: string, path: string): string | null {
  if (command.includes('/')) {
    const absolute = isAbsolute(command) ? command : join(cwd, command);
    return isExecutable(absolute) ? absolute : null;
  }
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether any process of the group is left. */
export function groupAlive(pgid: number): boolean {
  return isAlive(-pgid);
}

/** Signals a whole group; a group that is gone already is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Resolves once `check` is false, polling; false when `ms` passed first. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (check()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** SIGTERM to the group, `graceMs` for it to go, then SIGKILL. Answers whether it left on SIGTERM. */
export async function stopGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<boolean> {
  signalGroup(pgid, 'SIGTERM');
  if (await until(() => groupAlive(pgid), graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  await until(() => groupAlive(pgid), 2_000);
  return false;
}

/**
 * The group leader, between the harness and the agent (`$@`). SIGUSR1 is the parent-death signal:
 * the whole group dies with the server. SIGTERM/INT/HUP reach the agent directly (the group is
 * signalled), so the shell only waits on: a handler, not an ignore, so the agent starts with the
 * default dispositions. Its stdin is handed to the agent explicitly (an asynchronous command's
 * stdin would otherwise be /dev/null). The agent's exit status is the shell's.
 */
const GROUP_LEADER = [
  "trap 'kill -KILL 0' USR1",
  "trap ':' TERM INT HUP",
  'exec 3<&0',
  '"$@" <&3 3<&- &',
  'agent=$!',
  'exec 3<&-',
  'while :; do wait "$agent"; status=$?; kill -0 "$agent" 2>/dev/null || break; done',
  'exit "$status"',
].join('\n');

export interface LaunchRequest {
  /** Absolute path of the executable. */
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; null closes it at once. */
  stdin: string | null;
}

export interface Launched {
  child: ChildProcess;
  pid: number;
  pgid: number;
  startTicks: string | null;
  /** The leader's exit. Listened to from the spawn on: a quick agent may be gone before anyone awaits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every pipe of the child closed. */
  closed: Promise<void>;
  /** The child's stdout and stderr, held from the spawn on until a reader attaches. */
  stdout: PipeRelay;
  stderr: PipeRelay;
}

/**
 * A pipe read from the spawn on. Node discards what a child wrote to a pipe nobody reads once the
 * child exits (it resumes such streams), so a quick agent's whole answer could be lost between
 * the spawn and the moment the harness attaches its reader.
 */
export interface PipeRelay {
  /** Receives what was held, then every later chunk. */
  attach(reader: (chunk: Buffer) => void): void;
}

function relay(stream: NodeJS.ReadableStream | null): PipeRelay {
  let held: Buffer[] = [];
  let reader: ((chunk: Buffer) => void) | null = null;
  stream?.on('data', (chunk: Buffer) => (reader === null ? held.push(chunk) : reader(chunk)));
  return {
    attach(next) {
      reader = next;
      for (const chunk of held) next(chunk);
      held = [];
    },
  };
}

/**
 * Starts one turn's process. The promise rejects when it could not start at all (the executable
 * vanished, a permission, a cwd that is gone), with the system's reason.
 */
export function launch(request: LaunchRequest): Promise<Launched> {
  const guard = setpriv();
  const shell = ['/bin/sh', '-c', GROUP_LEADER, 'majordomus-agent', request.command, ...request.args];
  const [file, ...args] = guard === null ? shell : [guard, '--pdeathsig', 'USR1', '--', ...shell];
  const child = spawn(file as string, args, {
    cwd: request.cwd,
    env: request.env,
    // A group of its own (setsid): one signal reaches everything the agent forks.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stdout = relay(child.stdout);
  const stderr = relay(child.stderr);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.off('error', reject);
      const pid = child.pid as number;
      // An agent that wants stdin closed (codex waits for it) gets EOF at once.
      child.stdin?.on('error', () => undefined);
      if (request.stdin === null) child.stdin?.end();
      else child.stdin?.end(request.stdin);
      resolve({ child, pid, pgid: pid, startTicks: startTicksOf(pid), exited, closed, stdout, stderr });
    });
  });
}
