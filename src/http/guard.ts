/**
 * DNS-rebinding protection: a request must name this server in its Host header, and a browser
 * request must come from a page of this server (Origin). A web page elsewhere cannot drive it.
 */

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');
}

export interface HostGuard {
  /** Null when allowed, else why not. */
  refusal(host: string, origin: string): string | null;
}

export function hostGuard(boundHost: string, port: number): HostGuard {
  const names = new Set(LOOPBACK_NAMES);
  if (!isLoopbackHost(boundHost)) names.add(boundHost.includes(':') ? `[${boundHost}]` : boundHost);
  const hosts = new Set([...names].map((name) => `${name}:${port}`));
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  return {
    refusal(host, origin) {
      if (!hosts.has(host.toLowerCase())) return `Host "${host}" does not name this server`;
      if (origin !== '' && !origins.has(origin.toLowerCase())) return `Origin "${origin}" is not this server`;
      return null;
    },
  };
}
