/**
 * The layer's freshness as a client sees it: the owner started with debug logs (so a test can wait
 * until it watches the layer), reads of one object through every path, and the generation.
 */
import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { joinPeer, rest, restOk, type Peer } from './coordination.js';
import { readLeaseDoc, toolOutput, waitForLog, type Scene } from './shared.js';
import { openHttpSession, type HttpMcpSession } from './shared.js';

export const LIST_CHANGED = 'notifications/resources/list_changed';
export const UPDATED = 'notifications/resources/updated';
/** The owner's debug line once its layer is watched. */
export const WATCHING = /layer: watching \d+ directories/;
/** The info (or warn) line of each reload swapped in. */
export const RELOADED = /layer generation (\d+): (\d+) objects/g;
/** The debug line of a rebuild that changed nothing. */
export const NOTHING_CHANGED = /layer: rebuilt in \d+ ms, nothing changed/g;

/** The first `mcp` of a checkout (the owner), with debug logs, once it watches its layer. */
export async function startWatchingOwner(scene: Scene, root: string, name = 'owner', globalArgs: readonly string[] = []): Promise<Peer> {
  const owner = await joinPeer(scene, root, name, { env: { MAJORDOMUS_LOG: 'debug' }, globalArgs });
  await waitForLog(owner.stderr, WATCHING);
  return owner;
}

/** The text of a resource read over an MCP client (stdio, direct or bridged). */
export async function resourceText(client: Client, uri: string): Promise<string> {
  const read = await client.readResource({ uri });
  return (read.contents[0] as { text: string }).text;
}

/** The content of an object through REST (`GET /api/v1/object`). */
export async function restContent(root: string, uri: string): Promise<string> {
  return restOk<{ content: string }>(await rest(root, 'GET', `/api/v1/object?uri=${encodeURIComponent(uri)}`)).content;
}

/** An MCP session over `POST /mcp` (no stream), as a plain HTTP client holds one. */
export async function httpMcpSession(root: string, name: string): Promise<HttpMcpSession> {
  const lease = await readLeaseDoc(root);
  expect(lease?.url).toEqual(expect.any(String));
  return (await openHttpSession(lease?.url as string, name, lease?.token as string)).session;
}

/** The text of a resource read over `POST /mcp`. */
export async function httpResourceText(session: HttpMcpSession, uri: string): Promise<string> {
  const answer = await session.request('resources/read', { uri });
  expect(answer.error, JSON.stringify(answer)).toBeUndefined();
  return answer.result.contents[0].text as string;
}

export interface InfoAnswer {
  generation: number;
  state: 'ok' | 'degraded';
  counts: Record<string, number>;
  diagnostics: Array<{ severity: string; code: string; path: string; message: string }>;
}

export function infoVia(client: Client): Promise<InfoAnswer> {
  return toolOutput<InfoAnswer>(client, 'majordomus_info');
}

/** How many times `pattern` (global) matched in `text`. */
export function matches(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}
