/**
 * Every reader of /proc, over one parser of `/proc/PID/stat`:
 *
 * - which process tree a peer lives in: a process's parent chain and its session (the terminal or
 *   the harness's detached group it belongs to). The git guard names the peer that commits by
 *   them: an agent's commands share its session, other terminals do not;
 * - which process a recorded agent turn was: its process group and its start time, which with the
 *   pid names one process for good (a pid alone may have been reused).
 *
 * Without /proc (not Linux) nothing is known: every reader answers null (or an empty chain).
 * (src/platform/files.ts asks /proc/self/fd which file a descriptor opened; that is a question
 * about a file read, and stays with the reads.)
 */
import { readFileSync, readlinkSync } from 'node:fs';

const PROC = '/proc';

/** The fields of `/proc/PID/stat` we read (proc(5) numbers them from 1). */
interface Stat {
  /** Field 4. */
  ppid: number;
  /** Field 5: the process group. */
  pgid: number;
  /** Field 6: the session. */
  session: number;
  /** Field 22: when the process started, in clock ticks since boot (kept as text: it may pass 2^53). */
  startTicks: string | null;
}

function statOf(pid: number, procRoot = PROC): Stat | null {
  let text: string;
  try {
    // latin1: the command name may hold any bytes, and only what follows it is read.
    text = readFileSync(`${procRoot}/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // The command name (field 2) is parenthesised and may hold spaces or parentheses: fields follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [ppid, pgid, session] = [fields[1], fields[2], fields[3]].map(Number);
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isInteger(session)) return null;
  return { ppid: ppid as number, pgid: pgid as number, session: session as number, startTicks: fields[19] ?? null };
}

/** The parent of a process, or null when it cannot be read. */
export function parentOf(pid: number, procRoot = PROC): number | null {
  const ppid = statOf(pid, procRoot)?.ppid;
  return ppid !== undefined && ppid > 0 ? ppid : null;
}

/**
 * `start`, its parent, its grandparent… nearest first, at most `max`, stopping before pid 1 (every
 * process descends from it, so it names nobody). Empty when `start` cannot be read (no /proc).
 */
export function ancestry(start: number, options: { max?: number; procRoot?: string } = {}): number[] {
  const max = options.max ?? 8;
  const chain: number[] = [];
  for (let pid = start; pid > 1 && chain.length < max && !chain.includes(pid); ) {
    const parent = parentOf(pid, options.procRoot);
    if (parent === null && chain.length === 0) return [];
    chain.push(pid);
    if (parent === null) break;
    pid = parent;
  }
  return chain;
}

/** The session id of a process, or null when it cannot be read. */
export function sessionOf(pid: number, procRoot = PROC): number | null {
  return statOf(pid, procRoot)?.session ?? null;
}

/** The process group of a process, or null when it is gone. */
export function processGroupOf(pid: number, procRoot = PROC): number | null {
  return statOf(pid, procRoot)?.pgid ?? null;
}

/**
 * When the process started, in clock ticks since boot. With the pid it names one process for
 * good (a pid alone may have been reused), or null when it is gone.
 */
export function startTicksOf(pid: number, procRoot = PROC): string | null {
  return statOf(pid, procRoot)?.startTicks ?? null;
}

/** A header value of pids (`123,456`), bounded; anything malformed yields none. */
export function parsePids(text: string, max = 64): number[] {
  if (text.trim() === '') return [];
  const pids = text.split(',').slice(0, max).map((part) => Number(part.trim()));
  return pids.every((pid) => Number.isInteger(pid) && pid > 1) ? pids : [];
}

/**
 * The path of the file behind this process's descriptor `fd`, as the kernel knows it, or null where
 * that cannot be asked (not Linux, no /proc in a minimal container).
 */
export function openedPath(fd: number, procRoot = PROC): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readlinkSync(`${procRoot}/self/fd/${fd}`);
  } catch {
    return null;
  }
}
