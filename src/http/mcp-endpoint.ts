/**
 * `/mcp`: the request half of MCP's Streamable HTTP transport. One JSON-RPC message per POST,
 * answered with JSON (never SSE); `initialize` opens a session and issues `Mcp-Session-Id`;
 * DELETE ends it; a session idle for longer than the expiry ends with its peer. The number of
 * open sessions is capped: every session is a peer the others read about.
 */
import { randomUUID } from 'node:crypto';
import { decodeUtf8, JsonInputError, parseJsonInput } from '../json-input.js';
import { frameText } from '../mcp/frame.js';
import type { JsonRpcResponse } from '../mcp/jsonrpc.js';
import { McpSession, unreadableFrameResponse, type McpBackend } from '../mcp/session.js';
import { emptyReply, errorReply, jsonReply, type HttpReply } from './reply.js';

/** What a client told the session cap is full waits before it tries again (seconds). */
export const BUSY_RETRY_AFTER_SECONDS = 5;

export const SESSION_HEADER = 'Mcp-Session-Id';
/** Names the caller's peer id on initialize; a bridge sends it back to keep its identity. */
export const PEER_HEADER = 'Mcp-Peer-Id';

interface OpenSession {
  session: McpSession;
  lastSeen: number;
}

export interface McpEndpointOptions {
  backend: McpBackend;
  idleMs: number;
  /** How many sessions may be open at once; past it `initialize` is answered 503 busy. */
  maxSessions: number;
  /** Whether new sessions may open (false once the lease is lost). */
  acceptsSessions: () => boolean;
  /** Called on every request of a session: the peer is alive. */
  touch?: (peerId: string) => void;
  now?: () => number;
}

/** A JSON-RPC answer as the body of a 200, written like every other transport writes it. */
function frameReply(answer: JsonRpcResponse, headers?: HttpReply['headers']): HttpReply {
  return { status: 200, contentType: 'application/json', body: frameText(answer), ...(headers ? { headers } : {}) };
}

function isInitialize(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'initialize';
}

export class McpEndpoint {
  readonly #sessions = new Map<string, OpenSession>();
  readonly #options: McpEndpointOptions;
  readonly #now: () => number;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The peer id of a live session, `undefined` for an unknown one. */
  peerOf(sessionId: string): string | null | undefined {
    const open = this.#sessions.get(sessionId);
    if (!open) return undefined;
    open.lastSeen = this.#now();
    return open.session.peerId;
  }

  async post(body: Uint8Array, sessionId: string, peerHint = ''): Promise<HttpReply> {
    let message: unknown;
    try {
      message = parseJsonInput(decodeUtf8(body));
    } catch (error) {
      if (error instanceof JsonInputError) return jsonReply(400, unreadableFrameResponse(error));
      throw error;
    }
    let open: OpenSession | undefined;
    let issued: string | undefined;
    if (sessionId === '') {
      if (!isInitialize(message)) {
        return errorReply('session_required', 'send initialize first, then every request with its Mcp-Session-Id header');
      }
      if (!this.#options.acceptsSessions()) {
        return errorReply('lease_lost', 'this server no longer holds the lease of the checkout; attach to the current one');
      }
      if (this.#sessions.size >= this.#options.maxSessions) {
        return {
          ...errorReply('busy', `${this.#sessions.size} MCP sessions are open, the most this server keeps; retry in ${BUSY_RETRY_AFTER_SECONDS} s or end an idle one`),
          headers: [['Retry-After', String(BUSY_RETRY_AFTER_SECONDS)]],
        };
      }
      issued = randomUUID();
      const session = new McpSession(this.#options.backend, peerHint === '' ? {} : { preferredPeerId: peerHint });
      open = { session, lastSeen: this.#now() };
    } else {
      open = this.#sessions.get(sessionId);
      if (!open) return errorReply('session_not_found', `no session ${sessionId}: it ended or expired`);
      open.lastSeen = this.#now();
      if (open.session.peerId !== null) this.#options.touch?.(open.session.peerId);
    }
    const answer = await open.session.handle(message);
    if (issued !== undefined) {
      // Only a session whose initialize succeeded is kept.
      if (answer?.error !== undefined) {
        open.session.close(); // a peer that joined before the failure leaves again
        return frameReply(answer);
      }
      this.#sessions.set(issued, open);
    }
    const headers =
      issued !== undefined
        ? ([
            [SESSION_HEADER, issued],
            [PEER_HEADER, open.session.peerId ?? ''],
          ] as const)
        : undefined;
    if (answer === undefined) return emptyReply(202, headers);
    return frameReply(answer, headers);
  }

  delete(sessionId: string): HttpReply {
    if (sessionId === '') return errorReply('session_required', 'DELETE /mcp needs the Mcp-Session-Id header');
    const open = this.#sessions.get(sessionId);
    if (!open) return errorReply('session_not_found', `no session ${sessionId}: it ended or expired`);
    this.#sessions.delete(sessionId);
    open.session.close();
    return emptyReply(204);
  }

  /** Ends sessions idle for longer than the expiry; answers how many ended. */
  expireIdle(): number {
    const limit = this.#now() - this.#options.idleMs;
    let ended = 0;
    for (const [id, open] of this.#sessions) {
      if (open.lastSeen > limit) continue;
      this.#sessions.delete(id);
      open.session.close();
      ended += 1;
    }
    return ended;
  }

  closeAll(): void {
    for (const open of this.#sessions.values()) open.session.close();
    this.#sessions.clear();
  }
}
