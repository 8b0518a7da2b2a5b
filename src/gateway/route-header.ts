/**
 * `X-Majordomus-Route`, on every chat-completions answer: where the request went and every entry
 * given up on the way (ASCII JSON: a header value must be ASCII).
 */
import type { ChainEntry } from './config.js';

export const ROUTE_HEADER = 'X-Majordomus-Route';

/** One entry given up on, as the route header and the logs show it. */
export interface Failover {
  provider: string;
  model: string;
  reason: string;
}

export interface RouteSoFar {
  /** The entry tried last; null before any was tried. */
  readonly last: ChainEntry | null;
  readonly failovers: readonly Failover[];
}

/** JSON with every non-ASCII character escaped. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function routeHeader(route: RouteSoFar): [string, string] {
  return [ROUTE_HEADER, asciiJson({ provider: route.last?.provider ?? null, model: route.last?.model ?? null, failovers: route.failovers })];
}
