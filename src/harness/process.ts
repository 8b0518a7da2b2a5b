/**
 * The agent processes: each turn's child leads its own process group (so one signal reaches every
 * process it forked), dies with the harness thread (Linux parent-death signal, through util-linux
 * `setpriv`, which execs the agent in place so the pid stays the child's), and is stopped with
 * SIGTERM to the group, a grace period, then SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** How long a group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5_000;

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

/** The absolute path `command` runs as: itself when it has a slash, else the first match on PATH. */
export function resolveCommand(command: string, cwd: string, path = process.env.PATH ?? ''): string | null {
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

/**
 * Field 22 of `/proc/PID/stat`: when the process started, in clock ticks since boot. With the pid
 * it names one process for good (a pid alone may have been reused), or null when it is gone.
 */
export function startTicksOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces and parentheses: count from its closing paren.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** Field 5 of `/proc/PID/stat`: the process group, or null when the process is gone. */
export function processGroupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgid = Number(fields[2]);
    return Number.isInteger(pgid) ? pgid : null;
  } catch {
    return null;
  }
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
}

/**
 * Starts one turn's process. The promise rejects when it could not start at all (the executable
 * vanished, a permission, a cwd that is gone), with the system's reason.
 */
export function launch(request: LaunchRequest): Promise<Launched> {
  const guard = setpriv();
  const [file, args] = guard === null ? [request.command, request.args] : [guard, ['--pdeathsig', 'KILL', '--', request.command, ...request.args]];
  const child = spawn(file, args, {
    cwd: request.cwd,
    env: request.env,
    // A group of its own (setsid): one signal reaches everything the agent forks.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.off('error', reject);
      const pid = child.pid as number;
      // An agent that wants stdin closed (codex waits for it) gets EOF at once.
      child.stdin?.on('error', () => undefined);
      if (request.stdin === null) child.stdin?.end();
      else child.stdin?.end(request.stdin);
      resolve({ child, pid, pgid: pid, startTicks: startTicksOf(pid) });
    });
  });
}
