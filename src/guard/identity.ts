/**
 * Who is committing, as the server can tell: the peer named by `MAJORDOMUS_PEER`, and the hook's
 * process ancestry. An agent runs `git commit` below the same process that started its
 * `majordomus mcp`, so the server finds the peer whose recorded chain meets this one nearest to
 * the hook (issue 12's interface: `claims.list` with `as` and `pids`).
 */
import { ancestry as processAncestry } from '../platform/proc.js';

/** How far up the ancestry goes (what `claims.list` accepts). */
export const MAX_ANCESTRY = 64;

export { parentOf } from '../platform/proc.js';

/**
 * The hook's ancestry, nearest first: `start` (our parent, the hook's shell), its parent, …, up to
 * `MAX_ANCESTRY` pids, stopping before pid 1. Empty on a system without `/proc`.
 */
export function ancestry(start: number = process.ppid, procRoot = '/proc'): number[] {
  return processAncestry(start, { max: MAX_ANCESTRY, procRoot });
}
