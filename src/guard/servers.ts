/**
 * Which server the guard asks: this checkout's shared server, or — when none runs here — a live
 * server of another worktree of the repository that shares its board (docs/SCALE.md): the board
 * is the repository's, so a commit in a worktree without an agent is still judged against the
 * claims of the agents in the others.
 */
import { resolve } from 'node:path';
import { runGit } from '../platform/git.js';
import { settings } from '../platform/settings.js';
import { readLease } from '../shared/lease.js';
import { locateCheckout } from '../shared/locate.js';
import { getJson, probe } from '../shared/probe.js';

export interface Server {
  /** The root of the checkout whose server this is. */
  root: string;
  url: string;
  token: string;
  /** Set when the server is another worktree's: its label, which its own peers and claims lack. */
  sibling?: { label: string; root: string };
}

/** How long a sibling's board answer may take once its probe found it live. */
const BOARD_TIMEOUT_MS = 2_000;

/** The live shared server of the checkout at `start`, or null: no checkout, no lease, or no answer to the probe. */
export async function liveServer(start: string): Promise<Server | null> {
  try {
    const checkout = await locateCheckout(start);
    const reading = await readLease(checkout.leasePath);
    if (reading.state !== 'document' || reading.doc.url === null) return null;
    const { url, token } = reading.doc;
    return (await probe(url, token)).live ? { root: checkout.root, url, token } : null;
  } catch {
    return null;
  }
}

/** A live server of another worktree of this repository whose board is shared, or null. */
export async function siblingServer(start: string): Promise<Server | null> {
  try {
    if (settings().boardScope === 'checkout') return null;
  } catch {
    // a malformed setting is for a server to refuse; the guard goes on as by default
  }
  const here = resolve((await runGit(start, ['rev-parse', '--show-toplevel'], { timeoutMs: 5_000 }).catch(() => '')).trim() || start);
  const listing = await runGit(start, ['worktree', 'list', '--porcelain'], { timeoutMs: 5_000 }).catch(() => '');
  const others = listing
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => resolve(line.slice('worktree '.length)))
    .filter((path) => path !== here);
  for (const path of others) {
    const server = await liveServer(path);
    if (server === null) continue;
    const label = await sharedLabel(server);
    if (label !== null) return { ...server, sibling: { label, root: path } };
  }
  return null;
}

/** The sibling's label when its board is shared (a server kept to its checkout does not speak for this one). */
async function sharedLabel(server: Server): Promise<string | null> {
  try {
    const answer = await getJson(`${server.url}/api/v1/board/checkouts`, BOARD_TIMEOUT_MS, server.token);
    const body = answer.body as { shared?: unknown; transport?: unknown; you?: { checkout?: unknown } | null } | null;
    if (answer.status !== 200 || body?.shared !== true) return null;
    return typeof body.you?.checkout === 'string' ? body.you.checkout : null;
  } catch {
    return null;
  }
}
