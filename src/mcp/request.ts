/**
 * What the handling of one MCP request shares across the session's parts: its params, its scope
 * (the signal that cancels it, where its own notifications go), and the error that becomes its
 * JSON-RPC error answer.
 */
import { isJsonRpcId, RPC, type JsonRpcId, type JsonRpcNotification } from '../platform/jsonrpc.js';

/** A request's params: always an object by the time a method sees them. */
export type Params = Record<string, unknown>;

/** Where a session writes a notification: one request's stream, or the session's own. */
export type NotificationSink = (frame: JsonRpcNotification) => void;

/** What a request is handled with besides its params. */
export interface RequestScope {
  signal: AbortSignal;
  notify: NotificationSink | undefined;
}

/** A request refused with a JSON-RPC error code: the session answers it as an error response. */
export class RequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The string param `name` that `method` needs; invalid params without it. */
export function requiredString(params: Params, name: string, method: string): string {
  const value = params[name];
  if (typeof value !== 'string') throw new RequestError(RPC.invalidParams, `Invalid params: ${method} needs a ${name}`);
  return value;
}

/** `_meta.progressToken` of a request's params, when the client asked for progress. */
export function progressTokenOf(params: unknown): JsonRpcId | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  const token = params._meta.progressToken;
  return isJsonRpcId(token) ? token : undefined;
}
