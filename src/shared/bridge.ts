/**
 * The bridge's wire: one loopback HTTP request per stdio message to the shared server's `/mcp`,
 * carrying the lease's bearer token. No SDK and no HTTP library — the server always answers with
 * Content-Length — and no keep-alive, so a refused connection proves that a message never ran.
 */
import { Agent, request, type ClientRequest } from 'node:http';
import { errorResponse, frameHead, RPC } from '../mcp/jsonrpc.js';
import { getJson, PROBE_TIMEOUT_MS } from './probe.js';

export type Delivery =
  /** The server answered with a frame for the client (a response, or a refusal made into one). */
  | { kind: 'answer'; text: string }
  /** The server accepted a notification. */
  | { kind: 'accepted' }
  /** The server is gone or no longer ours; `ran` says whether the message may have run. */
  | { kind: 'lost'; why: string; mayHaveRun: boolean };

const agent = new Agent({ keepAlive: false });

/**
 * A request outstanding this long makes the bridge ask the server's `GET /` whether it is still
 * alive: a long call on a live server goes on, a server that hangs (stopped, deadlocked) is lost.
 */
export const WATCHDOG_MS = 5_000;

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function post(
  url: string,
  method: 'POST' | 'DELETE',
  headers: Record<string, string>,
  body: string,
  onSent?: (req: ClientRequest) => void,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/mcp`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
    onSent?.(req);
  });
}

function header(answer: RawAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A refusal that is not already JSON-RPC becomes a JSON-RPC error for the request it answers. */
function refusalFrame(line: string, answer: RawAnswer): string | undefined {
  if (answer.body.includes('"jsonrpc"')) return answer.body;
  const head = frameHead(line);
  if (head.kind !== 'request') return undefined; // a notification (or junk the server refused) gets no answer
  let detail = `HTTP ${answer.status}`;
  try {
    const { error } = JSON.parse(answer.body) as { error?: { code?: string; message?: string } };
    if (error) detail = `${error.code ?? answer.status}: ${error.message ?? ''}`;
  } catch {
    // keep the status alone
  }
  const code = answer.status >= 500 ? RPC.internalError : RPC.invalidRequest;
  return JSON.stringify(errorResponse(head.id, code, `the shared server refused the request (${detail})`));
}

export class HttpBridge {
  readonly url: string;
  readonly #token: string;
  #sessionId: string | null = null;
  #peerId: string | null = null;
  readonly #inFlight = new Set<ClientRequest>();

  constructor(url: string, token: string) {
    this.url = url;
    this.#token = token;
  }

  get sessionId(): string | null {
    return this.#sessionId;
  }

  /** The peer id the server gave this client at initialize. */
  get peerId(): string | null {
    return this.#peerId;
  }

  /** Sends one frame; `peerHint` asks the server to keep an identity on (re-)initialize. */
  async deliver(line: string, peerHint?: string | null): Promise<Delivery> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${this.#token}`,
    };
    if (this.#sessionId !== null) headers['mcp-session-id'] = this.#sessionId;
    if (peerHint) headers['mcp-peer-id'] = peerHint;
    let answer: RawAnswer;
    let watchdog: NodeJS.Timeout | undefined;
    try {
      answer = await post(this.url, 'POST', headers, line, (req) => {
        this.#inFlight.add(req);
        req.once('close', () => this.#inFlight.delete(req));
        watchdog = setInterval(() => {
          // Any answer will do: a superseded server still serves the sessions it has.
          getJson(`${this.url}/`, PROBE_TIMEOUT_MS, this.#token).catch((error: unknown) => {
            req.destroy(new Error(`${this.url} stopped answering (${error instanceof Error ? error.message : String(error)})`));
          });
        }, WATCHDOG_MS);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      // Refused: the connection never opened, so the message provably never ran.
      const why = code ? `${this.url} is unreachable (${code})` : error instanceof Error ? error.message : String(error);
      return { kind: 'lost', why, mayHaveRun: code !== 'ECONNREFUSED' };
    } finally {
      clearInterval(watchdog);
    }
    const session = header(answer, 'mcp-session-id');
    if (session) this.#sessionId = session;
    const peer = header(answer, 'mcp-peer-id');
    if (peer) this.#peerId = peer;
    if (answer.status === 200) return { kind: 'answer', text: answer.body };
    if (answer.status === 202) return { kind: 'accepted' };
    if (answer.status === 404 && answer.body.includes('session_not_found')) {
      return { kind: 'lost', why: 'the server lost this session', mayHaveRun: false };
    }
    if (answer.status === 409) return { kind: 'lost', why: 'the server lost its lease', mayHaveRun: false };
    const frame = refusalFrame(line, answer);
    return frame === undefined ? { kind: 'accepted' } : { kind: 'answer', text: frame };
  }

  /** Gives up every request in flight: each is answered `lost` with `why`. */
  abort(why: string): void {
    for (const req of this.#inFlight) req.destroy(new Error(why));
    this.#inFlight.clear();
  }

  /**
   * Ends the session (client EOF). Errors are irrelevant on the way out, and a server that does
   * not answer within the probe's deadline (stopped, hung) is not waited for.
   */
  async close(): Promise<void> {
    if (this.#sessionId === null) return;
    const headers = { 'mcp-session-id': this.#sessionId, authorization: `Bearer ${this.#token}` };
    this.#sessionId = null;
    let timer: NodeJS.Timeout | undefined;
    await post(this.url, 'DELETE', headers, '', (req) => {
      timer = setTimeout(() => req.destroy(new Error('no answer to DELETE')), PROBE_TIMEOUT_MS);
    })
      .catch(() => undefined)
      .finally(() => clearTimeout(timer));
  }
}
