/**
 * The liveness probe of a lease: `GET /` on its URL within a deadline. A live server names
 * majordomus, this checkout's repository id, and says it holds the lease.
 */
import { request } from 'node:http';

export const PROBE_TIMEOUT_MS = 2_000;

export type ProbeResult = { live: true } | { live: false; why: string };

interface RootAnswer {
  name?: unknown;
  repository_id?: unknown;
  leaseholder?: unknown;
}

/** `GET url` answered as JSON; `token` is sent as a bearer token (a non-loopback server wants it). */
export function getJson(url: string, timeoutMs: number, token?: string): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export async function probe(url: string, repositoryId: string, token?: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(`${url}/`, timeoutMs, token);
  } catch (error) {
    return { live: false, why: `${url} does not answer (${error instanceof Error ? error.message : String(error)})` };
  }
  const body = (answer.body ?? {}) as RootAnswer;
  if (answer.status !== 200 || body.name !== 'majordomus') return { live: false, why: `${url} is not a majordomus server` };
  if (body.repository_id !== repositoryId) return { live: false, why: `${url} serves another checkout` };
  if (body.leaseholder !== true) return { live: false, why: `${url} no longer holds the lease` };
  return { live: true };
}
