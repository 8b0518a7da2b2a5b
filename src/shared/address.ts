/** Where the shared server listens by default, and how its URL is written. Light: the bridge path may import it. */

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8741;

export function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
