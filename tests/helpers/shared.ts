/**
 * What the shared-server black-box suites need beyond the other helpers: the lease file read from
 * disk, log lines waited for (bounded), `mcp` driven over raw pipes (for byte comparisons and for
 * closing stdin without the SDK's SIGTERM two seconds later), MCP over HTTP with sessions against
 * a server's `/mcp`, the sockets a process listens on (from /proc), and a `Scene` that owns every
 * repository and process a test starts and tears them all down — closing clients, then SIGKILL by
 * pid as the last resort — after checking that no tracked file changed.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { spawnCli, type CliProcess } from './cli.js';
import { createFixtureRepo, type FixtureOptions, type FixtureRepo } from './fixture-repo.js';
import { connectMcp, type McpClientOptions, type McpConnection } from './mcp-client.js';
import { rawRequest, type RawResponse } from './serve.js';
import { statusOutside, treeState, type TreeState } from './tree-state.js';
import { isAlive, waitFor } from './wait.js';
import { sseMessages } from './event-stream.js';

/** Where the lease of a checkout with the default manifest lives. */
export const LEASE_RELATIVE = '.ai/local/state/mcp/server.json';
export const LEASE_SCHEMA = 'majordomus-mcp-lease/v1';
/** The protocol version the raw clients ask for (one the SDK supports). */
export const PROTOCOL_VERSION = '2025-06-18';

/** Generous bounds for a loaded two-core machine. */
export const START_TIMEOUT_MS = 30_000;
export const EXIT_TIMEOUT_MS = 20_000;

/** The environment every process of these suites gets: one pool thread (two cores are shared). */
export const BASE_ENV: Readonly<Record<string, string>> = { MAJORDOMUS_POOL_THREADS: '1' };

/** The owner's log line naming its URL (`serving http://127.0.0.1:PORT — …`). */
export const SERVING_HTTP = /serving (http:\/\/127\.0\.0\.1:(\d+))/;
export const ATTACHED = /attached to the shared server (http:\/\/127\.0\.0\.1:\d+) as a bridge/;

export interface LeaseDoc {
  schema: string;
  pid: number;
  token: string;
  root: string;
  url: string | null;
  started_at: string;
  version: string;
  /** The manifest the server validated (`dev:ino:size:mtimeNs:ctimeNs`). */
  manifest?: string;
}

/** Where the owner saves its board (peer numbering and announcements) beside the lease. */
export const BOARD_RELATIVE = '.ai/local/state/mcp/board.json';

export interface BoardDoc {
  schema: string;
  /** The token of the lease this board belongs to. */
  token: string;
  peers_issued: number;
  peers: Array<{ id: string; announcement: { intent: string; paths: string[]; at: string } }>;
}

/** The saved board on disk, or null when there is none (or it is not JSON). */
export async function readBoardDoc(root: string): Promise<BoardDoc | null> {
  try {
    return JSON.parse(await readFile(join(root, BOARD_RELATIVE), 'utf8')) as BoardDoc;
  } catch {
    return null;
  }
}

/**
 * Waits (bounded) until the lease names a URL and the board saved for it satisfies `accept`;
 * answers the lease. The owner saves its board asynchronously after each change.
 */
export async function waitForSettledLease(root: string, accept: (board: BoardDoc) => boolean, timeoutMs = START_TIMEOUT_MS): Promise<LeaseDoc> {
  return waitFor(
    async () => {
      const [lease, board] = await Promise.all([readLeaseDoc(root), readBoardDoc(root)]);
      return lease !== null && lease.url !== null && board !== null && board.token === lease.token && accept(board) ? lease : null;
    },
    { what: `the lease and the board at ${join(root, BOARD_RELATIVE)} to settle`, timeoutMs, intervalMs: 50 },
  );
}

export function leasePath(root: string): string {
  return join(root, LEASE_RELATIVE);
}

/** The lease document on disk, or null when there is none (or it is not JSON). */
export async function readLeaseDoc(root: string): Promise<LeaseDoc | null> {
  try {
    return JSON.parse(await readFile(leasePath(root), 'utf8')) as LeaseDoc;
  } catch {
    return null;
  }
}

/** Waits (bounded) until the lease names a URL and `accept` holds; answers the document. */
export async function waitForLease(root: string, accept: (doc: LeaseDoc) => boolean = () => true, timeoutMs = START_TIMEOUT_MS): Promise<LeaseDoc> {
  return waitFor(
    async () => {
      const doc = await readLeaseDoc(root);
      return doc !== null && doc.url !== null && accept(doc) ? doc : null;
    },
    { what: `the lease at ${leasePath(root)} to name a URL`, timeoutMs, intervalMs: 50 },
  );
}

/** A pattern that matches `text` as written. */
export function literally(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

/**
 * Waits (bounded) until a log matches (a string: contains it); answers the match. stderr is read
 * from its own pipe, so a line written before an answer on stdout may still be on its way when
 * the answer arrives: wait for it, never read it right after the answer.
 */
export async function waitForLog(stderr: () => string, expected: RegExp | string, timeoutMs = START_TIMEOUT_MS): Promise<RegExpMatchArray> {
  const pattern = typeof expected === 'string' ? literally(expected) : expected;
  try {
    return await waitFor(() => pattern.exec(stderr()), { what: `a log line matching ${pattern}`, timeoutMs, intervalMs: 50 });
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstderr so far:\n${stderr()}`);
  }
}

/** How many times a pattern occurs in a text. */
export function countOf(text: string, pattern: RegExp): number {
  return [...text.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`))].length;
}

/** The port of an `http://127.0.0.1:PORT` URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** `GET /` of a server: `{name, version, repository_id, leaseholder, surfaces, peers}`. */
export async function rootOf(url: string): Promise<{ name: string; repository_id: string; leaseholder: boolean; peers: number }> {
  const res = await rawRequest({ port: portOf(url), path: '/', timeoutMs: 5_000 });
  expect(res.status).toBe(200);
  return res.json();
}

/** Whether nothing listens on the port any more. */
export async function refusesConnections(url: string): Promise<boolean> {
  try {
    await rawRequest({ port: portOf(url), path: '/', timeoutMs: 5_000 });
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

export interface PeerView {
  id: string;
  client: { name: string; version: string };
  transport: 'stdio' | 'http';
  announcement?: { intent: string; paths: string[] };
  /** When the board is shared between checkouts: the peer's checkout, branch and host. */
  where?: { checkout: string; branch: string | null; host: string };
}

export interface PeersAnswer {
  you: string | null;
  peers: PeerView[];
}

/** `majordomus_peers` through an SDK client. */
export async function peersVia(client: Client): Promise<PeersAnswer> {
  const result = (await client.callTool({ name: 'majordomus_peers', arguments: {} })) as { isError?: boolean; structuredContent?: unknown };
  expect(result.isError ?? false).toBe(false);
  return result.structuredContent as PeersAnswer;
}

/** A tool's structured output through an SDK client; an `isError` result fails the test. */
export async function toolOutput<T = any>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content?: unknown; structuredContent?: unknown };
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  return result.structuredContent as T;
}

/** The sorted peer ids of an answer. */
export function idsOf(answer: PeersAnswer): string[] {
  return answer.peers.map((p) => p.id).sort();
}

// ---------------------------------------------------------------------------------------------
// `mcp` over raw pipes

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  result?: any;
  error?: { code: number; message: string };
}

/** `majordomus mcp` driven line by line: requests are matched to answers by id. */
export class RawMcp {
  readonly cli: CliProcess;
  #next = 0;

  constructor(cli: CliProcess) {
    this.cli = cli;
  }

  get pid(): number {
    return this.cli.pid;
  }

  stderr(): string {
    return this.cli.stderr();
  }

  /**
   * Writes `line` and answers the first raw stdout line whose id is `id` written after it: an
   * earlier answer with the same id (the same request sent twice) is never taken for this one.
   */
  async exchange(line: string, id: string | number | null, timeoutMs = START_TIMEOUT_MS): Promise<string> {
    const from = this.cli.lines().length;
    this.cli.send(line);
    return this.cli.waitForLine(
      (text) => {
        try {
          return (JSON.parse(text) as RpcMessage).id === id;
        } catch {
          return false;
        }
      },
      { from, timeoutMs },
    );
  }

  /** The complete stdout lines answering `id` so far. */
  answersTo(id: string | number | null): string[] {
    return this.cli.lines().filter((text) => {
      try {
        return (JSON.parse(text) as RpcMessage).id === id;
      } catch {
        return false;
      }
    });
  }

  /** The line of a request with a fresh id (for exchanging the same bytes elsewhere). */
  line(method: string, params?: unknown, id: string | number = `raw-${++this.#next}`): { line: string; id: string | number } {
    return { line: JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }), id };
  }

  async request(method: string, params?: unknown): Promise<RpcMessage> {
    const { line, id } = this.line(method, params);
    return JSON.parse(await this.exchange(line, id)) as RpcMessage;
  }

  notify(method: string): void {
    this.cli.send(JSON.stringify({ jsonrpc: '2.0', method }));
  }

  /** initialize + notifications/initialized, as a client does; answers the initialize result. */
  async initialize(name: string, version = '1.0.0'): Promise<RpcMessage> {
    const answer = await this.request('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version } });
    expect(answer.error, JSON.stringify(answer)).toBeUndefined();
    this.notify('notifications/initialized');
    return answer;
  }

  async peers(): Promise<PeersAnswer> {
    const answer = await this.request('tools/call', { name: 'majordomus_peers', arguments: {} });
    expect(answer.error, JSON.stringify(answer)).toBeUndefined();
    return answer.result.structuredContent as PeersAnswer;
  }

  /** Closes stdin (the client leaves) without signalling the process. */
  endInput(): void {
    this.cli.child.stdin.end();
  }
}

// ---------------------------------------------------------------------------------------------
// MCP over HTTP, as a client speaking the transport itself

/** The `Authorization` header of a lease's bearer token. */
export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

export class HttpMcpSession {
  readonly url: string;
  readonly sessionId: string;
  readonly peerId: string;
  readonly token: string;
  #next = 0;

  constructor(url: string, sessionId: string, peerId: string, token: string) {
    this.url = url;
    this.sessionId = sessionId;
    this.peerId = peerId;
    this.token = token;
  }

  /** POSTs one request of this session; answers the raw response. */
  async post(method: string, params?: unknown): Promise<RawResponse> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: `http-${++this.#next}`, method, ...(params === undefined ? {} : { params }) });
    return postMcp(this.url, body, { 'Mcp-Session-Id': this.sessionId, ...bearer(this.token) });
  }

  /**
   * One request's answer. A client that accepts both may get it as JSON or as an SSE stream ending
   * with it (2025-11-25 sessions are answered as streams): either way, the response.
   */
  async request(method: string, params?: unknown): Promise<RpcMessage> {
    const res = await this.post(method, params);
    expect(res.status, res.text).toBe(200);
    if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) return res.json<RpcMessage>();
    const response = (sseMessages(res.text) as Array<RpcMessage & { method?: string }>).find((message) => message.id !== undefined && message.method === undefined);
    expect(response, res.text).toBeDefined();
    return response as RpcMessage;
  }

  async peers(): Promise<PeersAnswer> {
    const answer = await this.request('tools/call', { name: 'majordomus_peers', arguments: {} });
    expect(answer.error, JSON.stringify(answer)).toBeUndefined();
    return answer.result.structuredContent as PeersAnswer;
  }

  async close(): Promise<number> {
    const res = await rawRequest({ port: portOf(this.url), method: 'DELETE', path: '/mcp', headers: { 'Mcp-Session-Id': this.sessionId, ...bearer(this.token) } }).catch(
      () => null,
    );
    return res?.status ?? 0;
  }
}

export function postMcp(url: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest({
    port: portOf(url),
    method: 'POST',
    path: '/mcp',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
    timeoutMs: 10_000,
  });
}

export function initializeBody(name: string, id: string | number = 'http-init'): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1.0.0' } },
  });
}

/** Opens an MCP session over HTTP at `url` (initialize, then the initialized notification) with the lease's token. */
export async function openHttpSession(url: string, name: string, token: string): Promise<{ session: HttpMcpSession; initialize: RpcMessage }> {
  const res = await postMcp(url, initializeBody(name), bearer(token));
  expect(res.status, res.text).toBe(200);
  const sessionId = res.headers['mcp-session-id'];
  const peerId = res.headers['mcp-peer-id'];
  expect(typeof sessionId, 'Mcp-Session-Id on initialize').toBe('string');
  expect(typeof peerId, 'Mcp-Peer-Id on initialize').toBe('string');
  const session = new HttpMcpSession(url, sessionId as string, peerId as string, token);
  const initialized = await postMcp(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    'Mcp-Session-Id': session.sessionId,
    ...bearer(token),
  });
  expect(initialized.status).toBe(202);
  return { session, initialize: res.json<RpcMessage>() };
}

// ---------------------------------------------------------------------------------------------
// Sockets, from /proc (Linux)

/** The TCP ports a process listens on: its socket inodes matched against /proc/net/tcp{,6}. */
export async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  let fds: string[] = [];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1] as string);
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, the inode is column 10.
      if (cols.length > 9 && cols[3] === '0A' && inodes.has(cols[9] as string)) {
        ports.push(Number.parseInt((cols[1] as string).split(':')[1] as string, 16));
      }
    }
  }
  return ports;
}

// ---------------------------------------------------------------------------------------------
// The scene: everything a test starts, torn down in afterEach

export interface SharedClientOptions extends Omit<McpClientOptions, 'cwd' | 'clientInfo'> {
  name?: string;
}

/** The stdio client of one `mcp` process (SDK Client over StdioClientTransport). */
export interface SharedClient extends McpConnection {
  readonly name: string;
}

interface TrackedRepo {
  repo: FixtureRepo;
  baseline: TreeState;
}

export class Scene {
  readonly #repos: TrackedRepo[] = [];
  /** How to end each process gently. */
  readonly #ends: Array<() => Promise<void>> = [];
  readonly #pids = new Set<number>();
  readonly #cleanups: Array<() => Promise<void> | void> = [];
  #names = 0;

  /** A fixture repository (`.ai/local/` ignored) whose tracked files are checked at the end. */
  async repo(options: FixtureOptions = {}): Promise<FixtureRepo> {
    const repo = await createFixtureRepo(options);
    this.#repos.push({ repo, baseline: await treeState(repo.root) });
    return repo;
  }

  /** Takes the baseline again (after the test itself changed tracked files on purpose). */
  async rebaseline(repo: FixtureRepo): Promise<void> {
    const tracked = this.#repos.find((r) => r.repo === repo);
    if (tracked) tracked.baseline = await treeState(repo.root);
  }

  /** Starts `mcp --http-port 0` with the SDK client and runs initialize. */
  async client(cwd: string, options: SharedClientOptions = {}): Promise<SharedClient> {
    const name = options.name ?? `client-${++this.#names}`;
    const connection = await connectMcp({
      ...options,
      cwd,
      args: options.args ?? (options.standalone ? [] : ['--http-port', '0']),
      env: { ...BASE_ENV, ...(options.env ?? {}) },
      clientInfo: { name, version: '1.0.0' },
    });
    const client: SharedClient = Object.assign(connection, { name });
    this.#ends.push(() => client.close());
    this.#pids.add(client.pid);
    return client;
  }

  /** Starts `mcp` (default `--http-port 0`) over raw pipes; nothing is sent yet. */
  raw(cwd: string, args: readonly string[] = ['mcp', '--http-port', '0'], env: Readonly<Record<string, string>> = {}): RawMcp {
    const raw = new RawMcp(spawnCli(args, { cwd, env: { ...BASE_ENV, ...env } }));
    this.#ends.push(() => raw.cli.stop(3_000));
    this.#pids.add(raw.pid);
    return raw;
  }

  /** Takes every repository's baseline again (a test that edited its layer on purpose). */
  async rebaselineAll(): Promise<void> {
    for (const tracked of this.#repos) tracked.baseline = await treeState(tracked.repo.root);
  }

  /** Any other process or resource to end (a pid to SIGKILL if still alive, or a callback). */
  track(pid: number): void {
    this.#pids.add(pid);
  }

  defer(cleanup: () => Promise<void> | void): void {
    this.#cleanups.push(cleanup);
  }

  /**
   * Ends everything: clients and raw processes together (stdin EOF, then the SDK's or our own
   * SIGTERM), then SIGKILL for any pid still alive; checks that the tracked
   * files and the status outside `.ai/local` are what they were; removes the repositories.
   */
  async cleanup(): Promise<void> {
    const failures: unknown[] = [];
    for (const cleanup of this.#cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    // All at once: an owner (whoever holds the role after a takeover) waits for its peers, and
    // they leave together with it.
    const ended = await Promise.allSettled(this.#ends.splice(0).map((end) => end()));
    for (const result of ended) if (result.status === 'rejected') failures.push(result.reason);
    for (const pid of this.#pids) {
      if (isAlive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    await waitFor(() => [...this.#pids].every((pid) => !isAlive(pid)), { what: 'every started process to be gone', timeoutMs: 10_000 }).catch(
      (error: unknown) => failures.push(error),
    );
    this.#pids.clear();
    for (const { repo, baseline } of this.#repos.splice(0)) {
      try {
        const after = await treeState(repo.root);
        expect(after.tracked, 'tracked files are unchanged').toEqual(baseline.tracked);
        expect(statusOutside(after, '.ai/local'), 'git status outside .ai/local is unchanged').toEqual(statusOutside(baseline, '.ai/local'));
      } catch (error) {
        failures.push(error);
      } finally {
        await repo.cleanup();
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

/** A layer with a rule (front matter), a plain rule, a document and an ADR. */
export const SHARED_LAYER: Readonly<Record<string, string>> = {
  '.ai/repo/rules/code/small-modules.md':
    '---\ntitle: Prefer small modules\ndescription: One concept per file.\ntags: [style, layout]\n---\n# Prefer small modules\n\nOne concept per file, one public entry.\n',
  '.ai/repo/rules/testing.md': '# Test behaviour, not code\n\nNames are sentences of behaviour.\n',
  '.ai/repo/knowledge/architecture/threads.md': '# Threads\n\nThe HTTP projection runs in its own worker thread.\n',
  '.ai/repo/adrs/0001-use-mcp.md': '# Use MCP\n\nEvery agent speaks it.\n',
  'src/index.ts': 'export const answer = 42;\n',
};
export const RULE_URI = 'majordomus://rule/code/small-modules';
