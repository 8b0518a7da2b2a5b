/**
 * What the live page shows, as plain data that crosses threads: the main thread's part (the peer
 * board, claims and messages, the layer's generation and diagnostics), the harness thread's part
 * (sessions with the tail of their transcripts, executor tasks) and the HTTP thread's own (version,
 * leaseholder, address). Each part is built where its data lives; the HTTP thread merges them.
 */
import type { Claim, Message, Overlap } from '../coordination/schemas.js';
import type { Peer } from '../peers/schema.js';

/** Bounds of one state: the page is a view, not an archive (the REST API has the rest). */
export const PAGE_LIMITS = {
  peers: 200,
  claims: 300,
  messages: 50,
  inbox: 50,
  diagnostics: 50,
  sessions: 20,
  tailLines: 12,
  tailLineChars: 300,
  tasks: 20,
  usageRows: 50,
} as const;

/** What the page calls a change: which part of the state to build again. */
export type PageTopic = 'peers' | 'coordination' | 'layer' | 'server';
export const PAGE_TOPICS: readonly PageTopic[] = ['peers', 'coordination', 'layer', 'server'];

export interface PageDiagnostic {
  severity: string;
  code: string;
  path: string;
  message: string;
}

/** Two claims of different peers that name a common path; `exclusive` when either is. */
export interface PageConflict {
  claims: [string, string];
  peers: [string, string];
  paths: Array<{ a: string; b: string }>;
  exclusive: boolean;
}

/** The main thread's part. */
export interface PageHostState {
  generation: number;
  objects: number;
  diagnostics: PageDiagnostic[];
  diagnosticCount: number;
  /** When this process started serving (ISO): the page counts the uptime itself. */
  startedAt: string;
  pid: number;
  peers: Peer[];
  claims: Claim[];
  conflicts: PageConflict[];
  /** The latest messages of every thread, oldest first. */
  messages: Message[];
  /** The overseer's inbox (the person at the page), oldest first. */
  inbox: { unread: number; messages: Message[] };
}

export interface PageSession {
  session: string;
  profile: string;
  agent: string;
  status: string;
  createdAt: string;
  lastTurnAt: string;
  exitCode?: number;
  /** The last transcript entries, shortened: `kind: text` each. */
  tail: string[];
}

export interface PageTask {
  task_id: string;
  status: string;
  turns: number;
  last_tool?: string;
  prompt_tokens: number;
  completion_tokens: number;
  question?: string;
  error?: string;
  /** What the gateway's priced requests for it cost, in `PageUsage.currency`. */
  cost?: number;
}

/** One row of the usage panel: a provider, a caller (`lease` or a key's name), or the total. */
export interface PageUsageRow {
  name: string;
  requests: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Present once a request of the row had a price. */
  cost?: number;
  priced_requests?: number;
  /** Present when the config names a reference price. */
  saved?: number;
}

/** What the gateway forwarded since the server started, and what it cost where prices are known. */
export interface PageUsage {
  since: string;
  currency: string | null;
  /** What `saved` is measured against, or null. */
  reference: string | null;
  total: PageUsageRow;
  providers: PageUsageRow[];
  keys: PageUsageRow[];
}

/** The harness thread's part. */
export interface PageHarnessState {
  sessions: PageSession[];
  tasks: PageTask[];
  usage: PageUsage;
}

function claimNumber(id: string): number {
  return /^c(\d+)$/.test(id) ? Number(id.slice(1)) : 0;
}

/**
 * The conflicts as pairs, each once (the lower claim first), from what the claim board's index
 * found: every claim that overlaps another peer's, with those overlaps.
 */
export function conflictPairs(overlapping: ReadonlyArray<{ claim: Claim; overlaps: readonly Overlap[] }>): PageConflict[] {
  const conflicts: PageConflict[] = [];
  for (const { claim, overlaps } of overlapping) {
    for (const other of overlaps) {
      if (claimNumber(other.claim) <= claimNumber(claim.id)) continue;
      conflicts.push({
        claims: [claim.id, other.claim],
        peers: [claim.peer, other.peer],
        paths: other.paths.map((pair) => ({ a: pair.yours, b: pair.theirs })),
        exclusive: claim.exclusive || other.exclusive,
      });
    }
  }
  return conflicts.sort((x, y) => claimNumber(x.claims[0]) - claimNumber(y.claims[0]) || claimNumber(x.claims[1]) - claimNumber(y.claims[1]));
}

/**
 * One transcript line (`{at, kind, text?, event}`) as the page shows it, bounded: its time, then
 * `kind: text`, or for an event without text its kind and the vendor's event type (`other (tick)`).
 */
export function tailLine(line: string): string {
  let shown = line;
  try {
    const entry = JSON.parse(line) as { at?: unknown; kind?: unknown; text?: unknown; event?: { type?: unknown } };
    const kind = typeof entry.kind === 'string' ? entry.kind : 'event';
    const type = typeof entry.event?.type === 'string' ? ` (${entry.event.type})` : '';
    // The time of day (UTC, to the millisecond) tells apart entries that say the same.
    const at = typeof entry.at === 'string' && /^\d{4}-\d\d-\d\dT/.test(entry.at) ? `${entry.at.slice(11, 23)} ` : '';
    shown = `${at}${typeof entry.text === 'string' && entry.text !== '' ? `${kind}: ${entry.text}` : `${kind}${type}`}`;
  } catch {
    // Not JSON (a cut line): shown as it is.
  }
  shown = shown.replace(/\s+/g, ' ').trim();
  return shown.length <= PAGE_LIMITS.tailLineChars ? shown : `${shown.slice(0, PAGE_LIMITS.tailLineChars)}…`;
}
