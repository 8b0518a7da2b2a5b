/**
 * Who is committing, as the server can tell: the peer named by `MAJORDOMUS_PEER`, and the hook's
 * process ancestry. An agent runs `git commit` below the same process that started its
 * `majordomus mcp`, so the server finds the peer whose recorded chain meets this one nearest to
 * the hook (issue 12's interface: `claims.list` with `as` and `pids`).
 */
import { ancestry as processAncestry } from '../platform/proc.js';
import { MajordomusError } from '../platform/errors.js';

/** How far up the ancestry goes (what `claims.list` accepts). */
export const MAX_ANCESTRY = 64;

const PEER_ID = /^p[1-9]\d{0,8}$/;

/** `MAJORDOMUS_PEER`, validated: a peer id such as `p3`, or null when unset or empty. */
export function peerFromEnvironment(env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const value = env.MAJORDOMUS_PEER;
  if (value === undefined || value === '') return null;
  if (!PEER_ID.test(value)) {
    throw new MajordomusError('MAJ_USAGE', `MAJORDOMUS_PEER=${JSON.stringify(value)} is not a peer id such as p3 (name a peer the peers list shows, or unset it)`);
  }
  return value;
}

export { parentOf } from '../platform/proc.js';

/**
 * The hook's ancestry, nearest first: `start` (our parent, the hook's shell), its parent, …, up to
 * `MAX_ANCESTRY` pids, stopping before pid 1. Empty on a system without `/proc`.
 */
export function ancestry(start: number = process.ppid, procRoot = '/proc'): number[] {
  return processAncestry(start, { max: MAX_ANCESTRY, procRoot });
}
