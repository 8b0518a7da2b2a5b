/**
 * JSON-RPC 2.0 as MCP frames it: the error codes, and reading just enough of a frame's text to
 * answer it (its id, its method) without a full parse on hot paths. It imports nothing, so the
 * bridge — which must start fast — shares it with the session, the stdio loop and the link.
 */

/** JSON-RPC's codes and MCP's "resource not found" (the same numbers as the SDK's `ErrorCode`). */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  resourceNotFound: -32002,
} as const;

export type JsonRpcId = string | number;

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** A message that expects no answer: a progress report, a cancellation, a server's news. */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** What a frame's text says of itself: a request (with id), a notification, or not JSON-RPC. */
export type FrameHead =
  | { kind: 'request'; id: JsonRpcId; method: string }
  | { kind: 'notification'; method: string }
  | { kind: 'other'; id: JsonRpcId | null };

/** Parses `text` once to learn its id and method (the frame is forwarded or answered elsewhere). */
export function frameHead(text: string): FrameHead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'other', id: null };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'other', id: null };
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (typeof method !== 'string') return { kind: 'other', id: isJsonRpcId(id) ? id : null };
  if (id === undefined) return { kind: 'notification', method };
  return isJsonRpcId(id) ? { kind: 'request', id, method } : { kind: 'other', id: null };
}

/**
 * The error frame answering `text`, or undefined when it needs no answer (a notification, or a
 * response the peer sent us). Text that is not JSON-RPC is answered with id null.
 */
export function errorFrameFor(text: string, code: number, message: string): string | undefined {
  const head = frameHead(text);
  if (head.kind === 'notification') return undefined;
  return JSON.stringify(errorResponse(head.id, code, message));
}
