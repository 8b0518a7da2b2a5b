/**
 * `initialize`, read and answered: the protocol version agreed (the client's when supported, else
 * the latest), the client's name (bounded, without control characters: other agents read it), the
 * experimental capabilities it declared, and what this server declares back.
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { PeerClient } from '../peers/board.js';
import { cleanClient } from '../peers/schema.js';
import { RPC } from '../platform/jsonrpc.js';
import { VERSION } from '../platform/version.js';
import { isObject, RequestError, type Params } from './request.js';

export interface InitializeRequest {
  protocolVersion: string;
  client: PeerClient;
  /** The names of the experimental capabilities the client declared (`claude/channel`…). */
  experimental: string[];
}

export function readInitialize(params: Params): InitializeRequest {
  const requested = params.protocolVersion;
  if (typeof requested !== 'string') {
    throw new RequestError(RPC.invalidParams, 'Invalid params: initialize needs a protocolVersion string');
  }
  const info = isObject(params.clientInfo) ? params.clientInfo : {};
  const declared = isObject(params.capabilities) && isObject(params.capabilities.experimental) ? params.capabilities.experimental : {};
  return {
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
    client: cleanClient(info.name, info.version),
    experimental: Object.keys(declared),
  };
}

/**
 * What the server declares. `tasks` only where the protocol agreed has them (2025-11-25): tool
 * calls may run as tasks, which a client may list and cancel.
 */
export function initializeResult(protocolVersion: string, instructions: string, offer: { tasks: boolean } = { tasks: false }): unknown {
  return {
    protocolVersion,
    // claude/channel: task notices and turn ends reach a client that declared it too.
    // The layer stays fresh: a reload tells the client (list_changed, updated for subscriptions).
    // logging: the server's warnings reach the client as notifications/message (src/mcp/logging.ts).
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: true },
      logging: {},
      ...(offer.tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
      experimental: { 'claude/channel': {} },
    },
    serverInfo: { name: 'majordomus', version: VERSION },
    instructions,
  };
}
