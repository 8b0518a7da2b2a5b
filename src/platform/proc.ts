/**
 * Which process tree a peer lives in, read from /proc: a process's parent chain and its session
 * (the terminal or the harness's detached group it belongs to). The git guard names the peer that
 * commits by them: an agent's commands share its session, other terminals do not. Without /proc
 * (not Linux) nothing is known and nobody is identified this way.
 */
import { readFileSync } from 'node:fs';

interface Stat {
  ppid: number;
  session: number;
}

function statOf(pid: number, procRoot = '/proc'): Stat | null {
  try {
    const text = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    // The command name is parenthesised and may hold spaces or parentheses: fields follow the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    const session = Number(fields[3]);
    return Number.isInteger(ppid) && Number.isInteger(session) ? { ppid, session } : null;
  } catch {
    return null;
  }
}

/** The parent of a process, or null when it cannot be read. */
export function parentOf(pid: number, procRoot = '/proc'): number | null {
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
export function sessionOf(pid: number): number | null {
  return statOf(pid)?.session ?? null;
}

/** A header value of pids (`123,456`), bounded; anything malformed yields none. */
export function parsePids(text: string, max = 64): number[] {
  if (text.trim() === '') return [];
  const pids = text.split(',').slice(0, max).map((part) => Number(part.trim()));
  return pids.every((pid) => Number.isInteger(pid) && pid > 1) ? pids : [];
}
