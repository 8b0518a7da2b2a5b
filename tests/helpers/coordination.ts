/**
 * What the coordination black-box suites need: peers (an SDK client over stdio each, owner or
 * bridge) that know their own peer id and collect every notification their server pushes, the
 * claim and message views of the interface, a refusal read the same way whether MCP answers it as
 * an `isError` result or as JSON-RPC -32602 (schema violations), REST with the lease's token, and
 * the journal under `.ai/local/coordination/` read line by line.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { z } from 'zod';
import { rawRequest, type RawResponse } from './serve.js';
import { ATTACHED, SERVING_HTTP, Scene, bearer, peersVia, portOf, readLeaseDoc, waitForLease, waitForLog, type SharedClient, type SharedClientOptions } from './shared.js';
import { waitFor } from './wait.js';

// ---------------------------------------------------------------------------------------------
// The views of the interface (docs: the issue 12 contract)

export interface PeerClientInfo {
  name: string;
  version: string;
}

export interface ClaimView {
  id: string;
  peer: string;
  client: PeerClientInfo;
  live: boolean;
  paths: string[];
  exclusive: boolean;
  intent: string;
  created_at: string;
  expires_at: string;
  /** When the board is shared between checkouts: where it was granted. */
  where?: { checkout: string; branch: string | null; host: string };
  /** Granted while the shared board was out of reach. */
  local_only?: boolean;
}

export interface PathPair {
  yours: string;
  theirs: string;
}

export interface Overlap {
  claim: string;
  peer: string;
  client: PeerClientInfo;
  intent: string;
  exclusive: boolean;
  live: boolean;
  paths: PathPair[];
}

export interface Granted {
  claim: ClaimView;
  warnings: Overlap[];
}

export interface ClaimsAnswer {
  you: string | null;
  claims: ClaimView[];
}

/** `majordomus_check_paths`: compact (each claim once, paths naming ids), or with `holders` in the `paths` view. */
export interface CheckAnswer {
  you: string | null;
  claims?: ClaimView[];
  paths: Array<{ path: string; claims: string[]; holders?: ClaimView[] }>;
}

export interface MessageView {
  id: string;
  thread: string;
  from: string;
  from_client?: PeerClientInfo;
  to: string[];
  subject?: string;
  body: string;
  at: string;
  acknowledged?: boolean;
}

export interface Sent {
  message: MessageView;
  delivered: string[];
}

export interface InboxAnswer {
  you: string;
  unread: number;
  messages: MessageView[];
}

export interface ThreadAnswer {
  thread: string;
  messages: MessageView[];
}

/** The notification pushed to the other peer when a granted claim overlaps its claim. */
export interface ClaimNotice {
  event: 'overlap';
  claim: ClaimView;
  overlaps: PathPair[];
  exclusive_conflict: boolean;
}

export interface ChannelNotice {
  content: string;
  meta: { source: string; kind: 'message' | 'claim'; id: string };
}

export const CLAIM_METHOD = 'notifications/majordomus/claim';
export const MESSAGE_METHOD = 'notifications/majordomus/message';
export const CHANNEL_METHOD = 'notifications/claude/channel';
/** What a client declares to be told through Claude Code's channel instead. */
export const CHANNEL_CAPABILITIES = { experimental: { 'claude/channel': {} } };

/** Where the history lives (`<local>/coordination/`, `<local>` = `.ai/local`). */
export const CLAIMS_JOURNAL = '.ai/local/coordination/claims.jsonl';
export const MESSAGES_JOURNAL = '.ai/local/coordination/messages.jsonl';

/** Bounds for a loaded two-core machine. */
export const NOTICE_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Peers

export interface Notice {
  method: string;
  params: any;
}

/** An `mcp` process with its SDK client, its peer id and every notification it was sent. */
export interface Peer extends SharedClient {
  readonly id: string;
  readonly notices: Notice[];
}

const noticeSchema = (method: string) => z.object({ method: z.literal(method), params: z.any() });

/**
 * Records every notification the client receives, in order: the three coordination methods
 * through their own handlers (as an agent's client would register them), anything else through
 * the fallback.
 */
export function collectNotices(client: Client): Notice[] {
  const notices: Notice[] = [];
  for (const method of [CLAIM_METHOD, MESSAGE_METHOD, CHANNEL_METHOD]) {
    client.setNotificationHandler(noticeSchema(method), (notification) => {
      notices.push({ method: notification.method, params: notification.params });
    });
  }
  client.fallbackNotificationHandler = async (notification) => {
    notices.push({ method: notification.method, params: notification.params });
  };
  return notices;
}

/**
 * Starts `mcp` in `root` as `name` and waits until it serves (the first in a checkout: the owner)
 * or has attached as a bridge; answers it with the peer id the server gave it.
 */
export async function joinPeer(scene: Scene, root: string, name: string, options: Omit<SharedClientOptions, 'name'> = {}): Promise<Peer> {
  const client = await scene.client(root, { ...options, name });
  const notices = collectNotices(client.client);
  await waitForLog(client.stderr, new RegExp(`${SERVING_HTTP.source}|${ATTACHED.source}`));
  const you = (await peersVia(client.client)).you;
  expect(you, `${name} has a peer id`).toMatch(/^p\d+$/);
  return Object.assign(client, { id: you as string, notices });
}

/** The owner first (it holds the lease before the others start), then the bridges, in order. */
export async function joinPeers(scene: Scene, root: string, names: readonly string[], options: Record<string, Omit<SharedClientOptions, 'name'>> = {}): Promise<Peer[]> {
  const peers: Peer[] = [];
  for (const name of names) {
    peers.push(await joinPeer(scene, root, name, options[name] ?? {}));
    if (peers.length === 1) await waitForLease(root);
  }
  return peers;
}

/** Waits (bounded) for a notification of `method` that `accept` takes; answers its params. */
export async function waitForNotice<T = any>(peer: Peer, method: string, accept: (params: T) => boolean = () => true, what = method): Promise<T> {
  try {
    const found = await waitFor(() => peer.notices.find((n) => n.method === method && accept(n.params as T)), {
      what: `${peer.id} to be sent ${what}`,
      timeoutMs: NOTICE_TIMEOUT_MS,
      intervalMs: 50,
    });
    return found.params as T;
  } catch (error) {
    throw new Error(`${(error as Error).message}\nnotices so far: ${JSON.stringify(peer.notices)}`);
  }
}

/** The params of every notification of `method` the peer was sent so far. */
export function noticesOf<T = any>(peer: Peer, method: string): T[] {
  return peer.notices.filter((n) => n.method === method).map((n) => n.params as T);
}

// ---------------------------------------------------------------------------------------------
// Tools

export interface Refusal {
  code: string;
  message: string;
}

/**
 * A call the server must refuse, read as `{code, message}`: an `isError` result (its text is
 * `code: message`) or, for a schema violation, JSON-RPC -32602 (reported as `invalid_input`).
 */
export async function refusalOf(client: Client, name: string, args: Record<string, unknown>): Promise<Refusal> {
  let result: { isError?: boolean; content?: Array<{ type: string; text?: string }>; structuredContent?: unknown };
  try {
    result = (await client.callTool({ name, arguments: args })) as typeof result;
  } catch (error) {
    expect(error, `${name} failed with something other than a JSON-RPC error`).toBeInstanceOf(McpError);
    const rpc = error as McpError;
    expect(rpc.code, `${name}: only a schema violation is a JSON-RPC error: ${rpc.message}`).toBe(ErrorCode.InvalidParams);
    return { code: 'invalid_input', message: rpc.message };
  }
  expect(result.isError, `expected ${name} to be refused, got ${JSON.stringify(result.structuredContent ?? result.content)}`).toBe(true);
  const text = (result.content ?? []).map((c) => c.text ?? '').join('\n');
  const match = /^([a-z_]+): ([\s\S]*)$/.exec(text);
  expect(match, `the refusal text names its code first: ${text}`).not.toBeNull();
  return { code: (match as RegExpExecArray)[1] as string, message: (match as RegExpExecArray)[2] as string };
}

// ---------------------------------------------------------------------------------------------
// REST, as the overseer (the lease's token and no MCP session)

/** One REST request to whichever server the lease names now (rejected after `timeoutMs` without an answer). */
export async function rest(root: string, method: string, path: string, body?: unknown, timeoutMs = 20_000): Promise<RawResponse> {
  const lease = await readLeaseDoc(root);
  expect(lease?.url, 'a lease naming a URL').toEqual(expect.any(String));
  const doc = lease as { url: string; token: string };
  return rawRequest({
    port: portOf(doc.url),
    method,
    path,
    headers: { ...bearer(doc.token), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs,
  });
}

/** A successful REST answer's body. */
export function restOk<T = any>(res: RawResponse): T {
  expect(res.status, res.text).toBe(200);
  return res.json<T>();
}

/** A REST refusal: exactly `{error: {code, message}}` with the status of the code; answers the message. */
export function restError(res: RawResponse, status: number, code: string): string {
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  const body = res.json<{ error: { code: string; message: string } }>();
  expect(body).toEqual({ error: { code, message: expect.stringMatching(/\S/) } });
  return body.error.message;
}

// ---------------------------------------------------------------------------------------------
// The journal

export interface JournalLine {
  event: string;
  at: string;
  [key: string]: unknown;
}

/** The journal's lines, each parsed (a line that is not a JSON object fails the test). */
export async function journalLines(root: string, file: string): Promise<JournalLine[]> {
  const text = await readFile(join(root, file), 'utf8');
  expect(text.endsWith('\n'), `${file} ends with a newline`).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let parsed: unknown;
      expect(() => {
        parsed = JSON.parse(line);
      }, `${file}: every line is JSON: ${line}`).not.toThrow();
      expect(parsed, `${file}: ${line}`).toEqual(expect.objectContaining({ event: expect.any(String), at: expect.any(String) }));
      expect(Number.isFinite(Date.parse((parsed as JournalLine).at)), `${file}: "at" is a date: ${line}`).toBe(true);
      return parsed as JournalLine;
    });
}

/** Waits (bounded) until the journal exists and holds a line `accept` takes; answers it. */
export async function waitForJournal(root: string, file: string, accept: (line: JournalLine) => boolean, what: string): Promise<JournalLine> {
  return waitFor(
    async () => {
      // Lenient while waiting (the file may not exist yet, a line may be half written); the
      // tests read it strictly with journalLines once it is there.
      const text = await readFile(join(root, file), 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        try {
          const parsed = JSON.parse(line) as JournalLine;
          if (parsed !== null && typeof parsed === 'object' && accept(parsed)) return parsed;
        } catch {
          // not a complete line yet
        }
      }
      return undefined;
    },
    { what: `${file} to record ${what}`, timeoutMs: NOTICE_TIMEOUT_MS, intervalMs: 100 },
  );
}

/** Whether a journal line names the id (in `ids`, or in its claim or message). */
export function journalNames(line: JournalLine, id: string): boolean {
  const ids = Array.isArray(line.ids) ? (line.ids as unknown[]) : [];
  const claim = line.claim as { id?: string } | undefined;
  const message = line.message as { id?: string } | undefined;
  return ids.includes(id) || claim?.id === id || message?.id === id;
}

/** Claims sorted by id number, for comparing lists whatever their order. */
export function byId<T extends { id: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
}
