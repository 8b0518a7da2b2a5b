/** What a route answers, before any server library writes it. */
import { wireErrorBody, type WireErrorCode, WIRE_ERRORS } from '../errors.js';

export interface HttpReply {
  status: number;
  contentType?: string;
  headers?: ReadonlyArray<readonly [string, string]>;
  body: string | Uint8Array;
}

export function jsonReply(status: number, value: unknown, headers?: HttpReply['headers']): HttpReply {
  return { status, contentType: 'application/json', body: JSON.stringify(value), ...(headers ? { headers } : {}) };
}

export function errorReply(code: WireErrorCode, message: string): HttpReply {
  return jsonReply(WIRE_ERRORS[code].status, wireErrorBody(code, message));
}

export function emptyReply(status: number, headers?: HttpReply['headers']): HttpReply {
  return { status, body: '', ...(headers ? { headers } : {}) };
}
