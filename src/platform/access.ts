/**
 * DNS-rebinding protection: a request must name this server in its Host header, and a browser
 * request must come from a page of this server (Origin). A web page elsewhere cannot drive it.
 *
 * On loopback only the loopback names are accepted. A server deliberately bound to another
 * address also accepts IP literals with its port: rebinding needs a DNS name, an IP literal
 * cannot be rebound.
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface HostGuard {
  /** Whether the server is bound to a loopback address only. */
  readonly loopbackOnly: boolean;
  /** Null when allowed, else why not. */
  refusal(host: string, origin: string): string | null;
}

/** Whether `given` is `wanted`, compared in constant time (only the length may show). */
export function secretMatches(given: string, wanted: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(wanted);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
function bearerOf(authorization: string): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? (match[1] as string) : null;
}

/** Whether an `Authorization` header carries `Bearer <token>` (compared in constant time). */
export function bearerMatches(authorization: string, token: string): boolean {
  const given = bearerOf(authorization);
  return given !== null && secretMatches(given, token);
}

/**
 * The secret a request presents: its bearer token, else its `x-api-key` header (how Anthropic's
 * clients send a key: Claude Code with ANTHROPIC_API_KEY); null when it presents none.
 */
export function presentedSecret(authorization: string, apiKey: string): string | null {
  const bearer = bearerOf(authorization);
  if (bearer !== null) return bearer;
  const key = apiKey.trim();
  return key === '' ? null : key;
}

/** `host:port` → [name, port]; IPv6 names keep their brackets. */
function split(authority: string): [string, string] {
  const at = authority.lastIndexOf(':');
  if (at <= 0 || authority.endsWith(']')) return [authority, ''];
  return [authority.slice(0, at), authority.slice(at + 1)];
}

function isIpLiteral(name: string): boolean {
  return isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

export function hostGuard(boundHost: string, port: number): HostGuard {
  const loopbackOnly = isLoopbackHost(boundHost);
  const wantedPort = String(port);
  const names = new Set(LOOPBACK_NAMES);
  const allowed = (authority: string): boolean => {
    const [name, authorityPort] = split(authority.toLowerCase());
    if (authorityPort !== wantedPort) return false;
    return names.has(name) || (!loopbackOnly && isIpLiteral(name));
  };
  return {
    loopbackOnly,
    refusal(host, origin) {
      if (!allowed(host)) return `Host "${host}" does not name this server`;
      if (origin !== '' && !(origin.toLowerCase().startsWith('http://') && allowed(origin.slice('http://'.length)))) {
        return `Origin "${origin}" is not this server`;
      }
      return null;
    },
  };
}
