/**
 * The liveness probe of a lease: `GET /` on its URL within a deadline, carrying the lease's
 * token. A live server names majordomus, accepts that token (so it is the server that wrote the
 * lease, not another one now on its port) and says it holds the lease.
 */
import { loopbackRequest } from '../platform/loopback-http.js';

export const PROBE_TIMEOUT_MS = 2_000;

export type ProbeResult = { live: true } | { live: false; why: string };

interface RootAnswer {
  name?: unknown;
  authorized?: unknown;
  leaseholder?: unknown;
}

/** `GET url` answered as JSON; `token` is sent as a bearer token (a non-loopback server wants it). */
export async function getJson(url: string, timeoutMs: number, token?: string): Promise<{ status: number; body: unknown }> {
  const split = /^(http:\/\/[^/]+)(\/.*)?$/.exec(url);
  if (!split) throw new Error(`not an http:// URL: ${url}`);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const answer = await loopbackRequest({ base: split[1] as string, method: 'GET', path: split[2] ?? '/', headers, timeoutMs }).response;
  return { status: answer.status, body: JSON.parse(answer.body) as unknown };
}

export async function probe(url: string, token: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(`${url}/`, timeoutMs, token);
  } catch (error) {
    return { live: false, why: `${url} does not answer (${error instanceof Error ? error.message : String(error)})` };
  }
  const body = (answer.body ?? {}) as RootAnswer;
  if (answer.status !== 200 || body.name !== 'majordomus') return { live: false, why: `${url} is not a majordomus server` };
  if (body.authorized !== true) return { live: false, why: `${url} does not take this lease's token (another server)` };
  if (body.leaseholder !== true) return { live: false, why: `${url} no longer holds the lease` };
  return { live: true };
}
