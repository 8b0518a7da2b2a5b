/**
 * The bridge's wire: one loopback HTTP request per stdio message to the shared server's `/mcp`,
 * carrying the lease's bearer token, each on its own connection, so a refused connection proves
 * that a message never ran (src/shared/loopback-http.ts).
 *
 * A request answered as an event stream has its notifications (a follow's progress) relayed to
 * the client as each arrives, byte for byte, and its response delivered as the answer; a stream
 * that ends without one answered a cancelled request, which gets no answer. Once a session's
 * `initialize` has succeeded the bridge also opens the session's own stream (`GET /mcp`) and
 * relays it; that stream ending is no reason to elect — the next request or ping finds out
 * whether the server is gone.
 */
import { ancestry } from '../platform/proc.js';
import { log } from '../platform/log.js';
import { errorResponse, frameHead, RPC } from '../platform/jsonrpc.js';
import { loopbackRequest, type LoopbackResponse, type PendingRequest } from '../platform/loopback-http.js';
import { settings } from '../platform/settings.js';
import { getJson, PROBE_TIMEOUT_MS } from './probe.js';

export type Delivery =
  /** The server answered with a frame for the client (a response, or a refusal made into one). */
  | { kind: 'answer'; text: string }
  /** The server accepted a notification. */
  | { kind: 'accepted' }
  /** The server is gone or no longer ours; `ran` says whether the message may have run. */
  | { kind: 'lost'; why: string; mayHaveRun: boolean };

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

export interface DeliverOptions {
  /** Asks the server to keep this identity on (re-)initialize. */
  peerHint?: string | null;
  /** Writes a frame to the client at once: the notifications of a request answered as a stream. */
  notify?: (frame: string) => void;
}

const CLIENT_PIDS = ancestry(process.ppid).join(',');

export class HttpBridge {
  readonly url: string;
  readonly #token: string;
  #sessionId: string | null = null;
  #peerId: string | null = null;
  readonly #inFlight = new Set<PendingRequest>();
  /** Where the frames of the session's own stream go; without it no stream is opened. */
  readonly #onStreamFrame: ((frame: string) => void) | undefined;
  #stream: PendingRequest | null = null;

  constructor(url: string, token: string, onStreamFrame?: (frame: string) => void) {
    this.url = url;
    this.#token = token;
    this.#onStreamFrame = onStreamFrame;
  }

  get sessionId(): string | null {
    return this.#sessionId;
  }

  /** The peer id the server gave this client at initialize. */
  get peerId(): string | null {
    return this.#peerId;
  }

  /** Sends one frame and answers what became of it. */
  async deliver(line: string, options: DeliverOptions = {}): Promise<Delivery> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      // A stream only where it carries something: a request's progress. On loopback a broken
      // connection means a lost server, so a resumable stream would buy a bridge nothing.
      Accept: line.includes('"progressToken"') ? 'application/json, text/event-stream' : 'application/json',
      Authorization: `Bearer ${this.#token}`,
    };
    if (this.#sessionId !== null) headers['Mcp-Session-Id'] = this.#sessionId;
    if (options.peerHint) headers['Mcp-Peer-Id'] = options.peerHint;
    // Its client's own depth: an agent the harness spawned carries one, a client nobody spawned is
    // at 0 (never the owner's: the owner may itself be a spawned agent).
    headers['Mcp-Spawn-Depth'] = String(settings().spawnDepth ?? 0);
    // The agent behind this bridge, for the git guard to tell peers apart (sent with initialize only).
    if (this.#sessionId === null) headers['Mcp-Client-Pids'] = CLIENT_PIDS;
    // The response of a streamed answer is held until the stream ends; everything else goes on at once.
    let response: string | undefined;
    const onEvent = (data: string): void => {
      const head = frameHead(data);
      if (head.kind === 'other') response = data;
      else options.notify?.(data);
    };
    const pending = loopbackRequest({ base: this.url, method: 'POST', path: '/mcp', headers, body: line, onEvent });
    this.#inFlight.add(pending);
    // A request outstanding for the watchdog's period (5 s; MAJORDOMUS_TEST_WATCHDOG_MS in tests)
    // makes the bridge ask the server's `GET /` whether it is still alive: a long call on a live
    // server goes on, a server that hangs (stopped, deadlocked) is lost.
    const watchdog = setInterval(() => {
      // Any answer will do: a superseded server still serves the sessions it has.
      getJson(`${this.url}/`, PROBE_TIMEOUT_MS, this.#token).catch((error: unknown) => {
        pending.abort(new Error(`${this.url} stopped answering (${error instanceof Error ? error.message : String(error)})`));
      });
    }, settings().watchdogMs);
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
    // Only a successful initialize issues a session: its stream can open now.
    if (session && answer.status === 200) this.#openStream();
    if (answer.status === 200 && answer.eventStream) return response === undefined ? { kind: 'accepted' } : { kind: 'answer', text: response };
    if (answer.status === 200) return { kind: 'answer', text: answer.body };
    if (answer.status === 202) return { kind: 'accepted' };
    if (answer.status === 404 && answer.body.includes('session_not_found')) {
      return { kind: 'lost', why: 'the server lost this session', mayHaveRun: false };
    }
    if (answer.status === 409) return { kind: 'lost', why: 'the server lost its lease', mayHaveRun: false };
    const frame = refusalFrame(line, answer);
    return frame === undefined ? { kind: 'accepted' } : { kind: 'answer', text: frame };
  }

  /** Gives up every request in flight (each is answered `lost` with `why`) and the session's stream. */
  abort(why: string): void {
    for (const pending of this.#inFlight) pending.abort(new Error(why));
    this.#inFlight.clear();
    this.closeStream();
  }

  /** Stops relaying the session's own stream (this bridge is being replaced, or ends). */
  closeStream(): void {
    const stream = this.#stream;
    this.#stream = null;
    stream?.abort(new Error('the session stream was closed'));
  }

  /**
   * Ends the session (client EOF). Errors are irrelevant on the way out, and a server that does
   * not answer within the probe's deadline (stopped, hung) is not waited for.
   */
  async close(): Promise<void> {
    this.closeStream();
    if (this.#sessionId === null) return;
    const headers = { 'Mcp-Session-Id': this.#sessionId, Authorization: `Bearer ${this.#token}` };
    this.#sessionId = null;
    await loopbackRequest({ base: this.url, method: 'DELETE', path: '/mcp', headers, timeoutMs: PROBE_TIMEOUT_MS }).response.catch(() => undefined);
  }

  /** Opens (or re-opens) `GET /mcp` for the current session and relays its frames as they come. */
  #openStream(): void {
    const relay = this.#onStreamFrame;
    if (relay === undefined || this.#sessionId === null) return;
    this.closeStream();
    const stream = loopbackRequest({
      base: this.url,
      method: 'GET',
      path: '/mcp',
      headers: { Accept: 'text/event-stream', Authorization: `Bearer ${this.#token}`, 'Mcp-Session-Id': this.#sessionId },
      onEvent: relay,
    });
    this.#stream = stream;
    stream.response.then(
      (answer) => {
        if (answer.status !== 200) log.debug(`the shared server refused the session stream (HTTP ${answer.status})`);
      },
      () => undefined, // the server went away or we closed it: a request or the ping finds out which
    );
    void stream.response.catch(() => undefined).then(() => {
      if (this.#stream === stream) this.#stream = null;
    });
  }
}
