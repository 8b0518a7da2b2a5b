/**
 * The bridge's wire: one loopback HTTP request per stdio message to the shared server's `/mcp`,
 * carrying the lease's bearer token, each on its own connection, so a refused connection proves
 * that a message never ran (src/shared/loopback-http.ts).
 */
import { errorResponse, frameHead, RPC } from '../mcp/jsonrpc.js';
import { loopbackRequest, type LoopbackResponse, type PendingRequest } from './loopback-http.js';
import { getJson, PROBE_TIMEOUT_MS } from './probe.js';

export type Delivery =
  /** The server answered with a frame for the client (a response, or a refusal made into one). */
  | { kind: 'answer'; text: string }
  /** The server accepted a notification. */
  | { kind: 'accepted' }
  /** The server is gone or no longer ours; `ran` says whether the message may have run. */
  | { kind: 'lost'; why: string; mayHaveRun: boolean };

/**
 * A request outstanding this long makes the bridge ask the server's `GET /` whether it is still
 * alive: a long call on a live server goes on, a server that hangs (stopped, deadlocked) is lost.
 */
export const WATCHDOG_MS = 5_000;

/** A refusal that is not already JSON-RPC becomes a JSON-RPC error for the request it answers. */
function refusalFrame(line: string, answer: LoopbackResponse): string | undefined {
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
  readonly #inFlight = new Set<PendingRequest>();

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
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${this.#token}`,
    };
    if (this.#sessionId !== null) headers['Mcp-Session-Id'] = this.#sessionId;
    if (peerHint) headers['Mcp-Peer-Id'] = peerHint;
    const pending = loopbackRequest({ base: this.url, method: 'POST', path: '/mcp', headers, body: line });
    this.#inFlight.add(pending);
    const watchdog = setInterval(() => {
      // Any answer will do: a superseded server still serves the sessions it has.
      getJson(`${this.url}/`, PROBE_TIMEOUT_MS, this.#token).catch((error: unknown) => {
        pending.abort(new Error(`${this.url} stopped answering (${error instanceof Error ? error.message : String(error)})`));
      });
    }, WATCHDOG_MS);
    let answer: LoopbackResponse;
    try {
      answer = await pending.response;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      // Refused: the connection never opened, so the message provably never ran.
      const why = code ? `${this.url} is unreachable (${code})` : error instanceof Error ? error.message : String(error);
      return { kind: 'lost', why, mayHaveRun: code !== 'ECONNREFUSED' };
    } finally {
      clearInterval(watchdog);
      this.#inFlight.delete(pending);
    }
    const session = answer.headers.get('mcp-session-id');
    if (session) this.#sessionId = session;
    const peer = answer.headers.get('mcp-peer-id');
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
    for (const pending of this.#inFlight) pending.abort(new Error(why));
    this.#inFlight.clear();
  }

  /**
   * Ends the session (client EOF). Errors are irrelevant on the way out, and a server that does
   * not answer within the probe's deadline (stopped, hung) is not waited for.
   */
  async close(): Promise<void> {
    if (this.#sessionId === null) return;
    const headers = { 'Mcp-Session-Id': this.#sessionId, Authorization: `Bearer ${this.#token}` };
    this.#sessionId = null;
    await loopbackRequest({ base: this.url, method: 'DELETE', path: '/mcp', headers, timeoutMs: PROBE_TIMEOUT_MS }).response.catch(() => undefined);
  }
}
