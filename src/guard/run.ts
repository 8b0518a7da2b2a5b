/**
 * `majordomus guard run pre-commit|pre-push`: what the installed hooks run. It asks this
 * checkout's shared server which paths other peers claimed (`GET /api/v1/claims`, with the
 * committer's identity) and judges the touched paths locally with the claims' own matcher.
 *
 * It gets in the way only when it knows: a live, exclusive claim of another peer covers a touched
 * path. Everything it cannot know lets the command through — no checkout, no lease, no server
 * answering within the probe's two seconds: silently (most commits happen with no agent about);
 * a live server that answers with an error, or git failing: with one warning line (fail open,
 * docs/GUARD.md says why). It writes to stderr only.
 */
import { resolve } from 'node:path';
import { insidePath } from '../platform/confine.js';
import { errorMessage } from '../platform/errors.js';
import { patternCovers } from '../coordination/patterns.js';
import { locateCheckout } from '../shared/locate.js';
import { getJson } from '../shared/probe.js';
import { runGit } from '../platform/git.js';
import { guardSetting, peerFromEnvironment, type GuardSetting } from '../platform/settings.js';
import type { GuardHook } from './hooks.js';
import { ancestry } from './identity.js';
import { liveServer, siblingServer, type Server } from './servers.js';
import { pushedPaths, stagedPaths } from './touched.js';

/** How long the claims request may take once the probe found the server live. */
const CLAIMS_TIMEOUT_MS = 5_000;
/** Touched paths listed per claim; the rest are counted. */
const LISTED_PATHS = 10;

/** A claim as `claims.list` answers it (issue 12's ClaimView). */
export interface ClaimView {
  id: string;
  peer: string;
  client: { name: string; version: string };
  live: boolean;
  paths: string[];
  exclusive: boolean;
  intent: string;
  created_at?: string;
  expires_at?: string;
}

export interface ClaimsAnswer {
  you: string | null;
  claims: ClaimView[];
}

const isString = (value: unknown): value is string => typeof value === 'string';

function isClaim(value: unknown): value is ClaimView {
  const claim = value as Partial<ClaimView> | null;
  return (
    typeof claim === 'object' &&
    claim !== null &&
    isString(claim.id) &&
    isString(claim.peer) &&
    typeof claim.client === 'object' &&
    claim.client !== null &&
    isString(claim.client.name) &&
    isString(claim.client.version) &&
    typeof claim.live === 'boolean' &&
    typeof claim.exclusive === 'boolean' &&
    isString(claim.intent) &&
    Array.isArray(claim.paths) &&
    claim.paths.every(isString)
  );
}

/** The answer checked for the fields the guard reads; null when it is something else. */
export function claimsAnswerOf(body: unknown): ClaimsAnswer | null {
  const answer = body as Partial<ClaimsAnswer> | null;
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.claims)) return null;
  if (answer.you !== null && !isString(answer.you)) return null;
  return answer.claims.every(isClaim) ? { you: answer.you, claims: answer.claims } : null;
}

export interface Finding {
  claim: ClaimView;
  /** The touched paths the claim covers. */
  paths: string[];
}

export interface Judgement {
  /** Live, exclusive claims of other peers covering a touched path. */
  blocking: Finding[];
  /** Other peers' claims covering a touched path that do not block (shared, or their peer is not attached). */
  noted: Finding[];
}

/** Which claims of other peers cover which of the touched paths (root-relative). */
export function judge(answer: ClaimsAnswer, touched: readonly string[]): Judgement {
  const judgement: Judgement = { blocking: [], noted: [] };
  const claims = answer.claims.filter((claim) => claim.peer !== answer.you).sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
  for (const claim of claims) {
    const paths = touched.filter((path) => claim.paths.some((pattern) => patternCovers(pattern, path)));
    if (paths.length === 0) continue;
    (claim.live && claim.exclusive ? judgement.blocking : judgement.noted).push({ claim, paths });
  }
  return judgement;
}

/** A path or glob as typed when it is plain, JSON-quoted otherwise (no space or control character reaches the terminal unquoted). */
function shownPath(path: string): string {
  return /^[\w./@+,=:~*?!{}[\]-]+$/.test(path) ? path : JSON.stringify(path);
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, LISTED_PATHS).map(shownPath).join(', ');
  return paths.length > LISTED_PATHS ? `${shown} and ${paths.length - LISTED_PATHS} more` : shown;
}

/** One claim, every text another agent wrote JSON-quoted. */
function describe({ claim, paths }: Finding, what: string): string {
  const how = claim.exclusive ? (claim.live ? 'holds {} exclusively' : 'held {} exclusively (its agent is not attached now)') : 'shares {}';
  return (
    `  ${claim.peer} (${JSON.stringify(claim.client.name)}) ${how.replace('{}', listed(claim.paths))}` +
    ` for ${JSON.stringify(claim.intent)} (claim ${claim.id}); ${what} touches ${listed(paths)}`
  );
}

/** What the guard says about a judgement; empty when there is nothing to say. */
export function report(judgement: Judgement, options: { hook: GuardHook; setting: 'refuse' | 'warn'; you: string | null }): string[] {
  const what = options.hook === 'pre-commit' ? 'this commit' : 'this push';
  const lines: string[] = [];
  const { blocking, noted } = judgement;
  if (blocking.length > 0) {
    const peers = [...new Set(blocking.map((finding) => finding.claim.peer))].join(', ');
    lines.push(
      options.setting === 'refuse'
        ? `majordomus git guard: ${what} is refused: it touches paths another agent claimed exclusively.`
        : `majordomus git guard: warning: ${what} touches paths another agent claimed exclusively; it goes on (MAJORDOMUS_GUARD=warn).`,
      ...blocking.map((finding) => describe(finding, what)),
    );
    if (options.you === null) {
      lines.push('  (majordomus did not recognise you as one of its peers; if you are the agent holding a claim, set MAJORDOMUS_PEER to your peer id.)');
    }
    lines.push(
      options.setting === 'refuse'
        ? `To go on: talk to ${peers} (send a message through majordomus, capability messages.send), wait until the claim is released or expires, or for this one command set MAJORDOMUS_GUARD=warn (go on with a warning) or MAJORDOMUS_GUARD=off (skip the guard).`
        : `Tell ${peers} (send a message through majordomus, capability messages.send).`,
    );
  }
  for (const finding of noted) lines.push(`majordomus git guard: note: ${describe(finding, what).trimStart()}`);
  return lines;
}

type ClaimsOutcome = { ok: true; answer: ClaimsAnswer } | { ok: false; why: string };

async function fetchClaims(server: Server, peer: string | null, pids: readonly number[]): Promise<ClaimsOutcome> {
  const query = new URLSearchParams();
  if (peer !== null) query.set('as', peer);
  for (const pid of pids) query.append('pids', String(pid));
  const text = query.toString();
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(`${server.url}/api/v1/claims${text === '' ? '' : `?${text}`}`, CLAIMS_TIMEOUT_MS, server.token);
  } catch (error) {
    return { ok: false, why: `the server at ${server.url} did not answer (${errorMessage(error)})` };
  }
  if (answer.status !== 200) {
    const message = (answer.body as { error?: { message?: unknown } } | null)?.error?.message;
    return { ok: false, why: `the server answered HTTP ${answer.status}${isString(message) ? ` (${message})` : ''}` };
  }
  const claims = claimsAnswerOf(answer.body);
  return claims === null ? { ok: false, why: 'the server answered something other than a list of claims' } : { ok: true, answer: claims };
}

/** A sibling's answer as this worktree's server would give it: its own peers and claims named by its label. */
function seenFromHere(answer: ClaimsAnswer, label: string): ClaimsAnswer {
  const qualify = (id: string): string => (id.includes('@') ? id : `${id}@${label}`);
  return { you: null, claims: answer.claims.map((claim) => ({ ...claim, id: qualify(claim.id), peer: qualify(claim.peer) })) };
}

/** The touched paths, relative to the checkout's root; paths outside it cannot be claimed. */
async function touchedPaths(hook: GuardHook, root: string, input: string): Promise<string[]> {
  const cwd = process.cwd();
  const top = (await runGit(cwd, ['rev-parse', '--show-toplevel'])).trim();
  const paths = hook === 'pre-commit' ? await stagedPaths(cwd) : await pushedPaths(cwd, input);
  return paths.flatMap((path) => {
    const inside = insidePath(root, resolve(top, path));
    return inside === undefined || inside === '' ? [] : [inside];
  });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function say(lines: readonly string[]): void {
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
}

/** Runs the guard for `hook`, starting the search for the checkout at `start`; answers the exit code. */
export async function runGuard(hook: GuardHook, start: string): Promise<number> {
  const setting = guardSetting();
  const peer = peerFromEnvironment();
  const what = hook === 'pre-commit' ? 'commit' : 'push';
  if (setting === 'off') {
    say([`majordomus git guard: bypassed for this ${what} (MAJORDOMUS_GUARD=off); claims were not checked.`]);
    return 0;
  }
  const input = hook === 'pre-push' ? await readStdin() : '';
  const own = await liveServer(start);
  // No server here: another worktree's speaks for the repository's board (its answer names no peer of ours).
  const server = own ?? (await siblingServer(start));
  if (server === null) return 0;
  const fetched = await fetchClaims(server, own === null ? null : peer, own === null ? [] : ancestry());
  const outcome = fetched.ok && server.sibling ? { ok: true as const, answer: seenFromHere(fetched.answer, server.sibling.label) } : fetched;
  if (!outcome.ok) {
    say([`majordomus git guard: warning: could not check claims: ${outcome.why}; the ${what} goes on unchecked.`]);
    return 0;
  }
  const others = outcome.answer.claims.filter((claim) => claim.peer !== outcome.answer.you);
  if (others.length === 0) return 0;
  let touched: string[];
  try {
    // Claim paths are relative to a checkout's root, the same in every worktree: the touched paths are taken relative to this one.
    const root = own?.root ?? (await locateCheckout(start)).root;
    touched = await touchedPaths(hook, root, input);
  } catch (error) {
    say([`majordomus git guard: warning: could not list the paths of this ${what}: ${errorMessage(error)}; it goes on unchecked.`]);
    return 0;
  }
  const judgement = judge(outcome.answer, touched);
  if (server.sibling && judgement.blocking.length + judgement.noted.length > 0) {
    say([`majordomus git guard: no server runs in this worktree; these claims are from the board it shares with the worktree at ${server.sibling.root}.`]);
  }
  say(report(judgement, { hook, setting, you: outcome.answer.you }));
  return judgement.blocking.length > 0 && setting === 'refuse' ? 1 : 0;
}
