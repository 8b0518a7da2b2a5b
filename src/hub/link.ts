/**
 * The link between one stdio client and whoever serves it. A `majordomus mcp` process elects:
 * it owns the shared server, bridges to it, or — when it cannot share — serves its client alone.
 * When its server goes away it elects again and either takes the role over (replaying its
 * client's `initialize`, so the client notices nothing) or re-attaches to the winner. A message
 * is re-sent only when it provably never ran; when nobody can serve, the client gets -32603
 * naming why — never silence (invariant 2).
 *
 * Messages are handled concurrently: a tool call that follows an agent for minutes holds up
 * neither the client's other requests nor the `notifications/cancelled` that stops it (a bridge
 * simply posts it; the server aborts the call). An election is exclusive: messages that arrive
 * while one runs wait for it, and requests that all find the same server lost cause one election.
 *
 * The bridge path imports nothing heavy: the layer, the registry and the HTTP thread are loaded
 * only by a process that serves.
 */
import { MajordomusError, errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import type { LayerSelection } from '../layer/load.js';
import { errorFrameFor, RPC } from '../platform/jsonrpc.js';
import type { McpSession } from '../mcp/session.js';
import type { Loaded } from '../runtime/load.js';
import { settings } from '../platform/settings.js';
import { HttpBridge } from '../shared/bridge.js';
import { elect, type ElectionOutcome } from '../shared/election.js';
import { LeaseUnavailable, releaseLeaseSync, type LeaseDocument } from '../shared/lease.js';
import type { Checkout } from '../shared/locate.js';
import { ClientReplay, safeToResend } from './client-replay.js';
import type { Owner } from './owner.js';

const MAX_REJOINS = 3;

type Elected = Extract<ElectionOutcome, { role: 'owner' }>;

export interface LinkOptions {
  checkout: Checkout;
  global: LayerSelection;
  cwd: string;
  host: string;
  port: number;
}

type Mode =
  | { kind: 'bridge'; bridge: HttpBridge }
  | { kind: 'owner'; owner: Owner; session: McpSession }
  | { kind: 'alone'; session: McpSession }
  | { kind: 'failed'; why: string };

export class ClientLink {
  readonly #options: LinkOptions;
  #mode: Mode = { kind: 'failed', why: 'not started' };
  /** What a new server must hear first so the client's session goes on. */
  readonly #replay = new ClientReplay();
  /** The election under way, which every message waits for. */
  #election: Promise<void> | null = null;
  /** Where the frames the server sends on its own go (stdout), once the stdio loop gave it. */
  #streamWrite: ((frame: string) => void) | null = null;
  #ping: NodeJS.Timeout | null = null;
  #pings = 0;
  #closed: Promise<void> | null = null;
  /** Set at once when the client has gone (before `#closed` runs its turn). */
  #closing = false;
  /** The lease this process won and has not yet handed to an owner (or released). */
  #electedLease: LeaseDocument | null = null;

  constructor(options: LinkOptions) {
    this.#options = options;
  }

  /** Elects and links; a layer this process cannot serve refuses the client (the caller exits). */
  async start(): Promise<void> {
    await this.#join(null, true);
  }

  get role(): Mode['kind'] {
    return this.#mode.kind;
  }

  /** Answers one frame of the client; `notify` writes the frames a request sends before its answer. */
  async handleLine(line: string, notify?: (frame: string) => void): Promise<string | undefined> {
    try {
      return await this.#handle(line, notify);
    } catch (error) {
      // Never silence (invariant 2): whatever failed, the client hears why.
      log.error(`cannot serve a message: ${errorMessage(error)}`);
      return errorFrameFor(line, RPC.internalError, `majordomus could not serve this message: ${errorMessage(error)}`);
    }
  }

  /** Takes the writer of what the server sends on its own, for this and every later session. */
  streamTo(write: (frame: string) => void): void {
    this.#streamWrite = write;
    const mode = this.#mode;
    if (mode.kind === 'owner' || mode.kind === 'alone') mode.session.streamTo(write);
  }

  /** The client is gone: end our session, and as owner serve until the last peer leaves. */
  close(): Promise<void> {
    this.#closing = true;
    this.#stopPing();
    // A bridge does not wait on what is in flight: its client is gone, nobody reads those answers,
    // and a server that never answers must not keep this process.
    if (this.#mode.kind === 'bridge') this.#mode.bridge.abort('the client has gone');
    this.#closed ??= (async () => {
      // An election under way settles the mode first (none starts once closing).
      await this.#election?.catch(() => undefined);
      // The mode stays: a signal while we wait for the last peer must still close the server.
      const mode = this.#mode;
      if (mode.kind === 'bridge') {
        mode.bridge.abort('the client has gone');
        await mode.bridge.close();
      }
      if (mode.kind === 'alone') mode.session.close();
      if (mode.kind === 'owner') {
        mode.session.close();
        if ((mode.owner.runtime.board?.size ?? 0) > 0) log.info('the client has gone; serving until the last peer leaves');
        await mode.owner.whenNoPeers();
        await mode.owner.close();
      }
    })();
    return this.#closed;
  }

  /** A signal: close at once without waiting for peers. */
  async abort(): Promise<void> {
    this.#stopPing();
    const mode = this.#mode;
    if (mode.kind === 'owner') await mode.owner.close();
    if (mode.kind === 'bridge') await mode.bridge.close();
  }

  /** The urgent half of `abort`, for a process about to die of a signal — even mid-election. */
  releaseLeaseNow(): void {
    if (this.#mode.kind === 'owner') this.#mode.owner.releaseLease();
    if (this.#electedLease) releaseLeaseSync(this.#options.checkout.leasePath, this.#electedLease.token);
  }

  /**
   * Elects again because `lost` failed, unless that already happened: an election under way is
   * joined, and one that has replaced `lost` is not repeated. Answers when the mode is settled.
   */
  #reelect(lost: Mode, pending: string | null, peerHint: string | null, why: string | null): Promise<void> {
    if (this.#election !== null) return this.#election;
    if (this.#mode !== lost) return Promise.resolve();
    const election = (async () => {
      if (why !== null) log.warn(`lost the shared server: ${why}; electing again`);
      await this.#join(pending, false, peerHint);
    })();
    this.#election = election;
    void election.catch(() => undefined).then(() => {
      if (this.#election === election) this.#election = null;
    });
    return election;
  }

  async #handle(line: string, notify: ((frame: string) => void) | undefined, attempt = 0): Promise<string | undefined> {
    // Only while an election runs does a message wait; otherwise it reaches its session at once,
    // so a cancellation that follows a request always finds it registered.
    if (this.#election !== null) await this.#election;
    this.#replay.remember(line);
    const mode = this.#mode;
    switch (mode.kind) {
      case 'owner':
      case 'alone':
        return mode.session.handleLine(line, notify);
      case 'failed':
        if (attempt === 0 && !this.#closing) {
          await this.#reelect(mode, line, null, null);
          if (this.#mode.kind !== 'failed') return this.#handle(line, notify, attempt + 1);
        }
        return errorFrameFor(line, RPC.internalError, `no majordomus server can serve this client: ${(this.#mode as { why: string }).why}`);
      case 'bridge': {
        const delivery = await mode.bridge.deliver(line, notify ? { notify } : {});
        if (delivery.kind === 'answer') return delivery.text;
        if (delivery.kind === 'accepted') return undefined;
        if (this.#closing) return errorFrameFor(line, RPC.internalError, `not answered: ${delivery.why}`);
        await this.#reelect(mode, line, mode.bridge.peerId, delivery.why);
        if (delivery.mayHaveRun && !safeToResend(line)) {
          return errorFrameFor(
            line,
            RPC.internalError,
            `the shared server went away while handling this request (${delivery.why}); it was not re-sent because it may have run`,
          );
        }
        if (attempt >= MAX_REJOINS) return errorFrameFor(line, RPC.internalError, `no majordomus server stayed reachable: ${delivery.why}`);
        return this.#handle(line, notify, attempt + 1);
      }
    }
  }

  /**
   * Elects and sets the mode. `pending` is the message being handled (it is not replayed);
   * `initial` means the client has sent nothing yet, so a layer error refuses it outright.
   */
  async #join(pending: string | null, initial: boolean, peerHint: string | null = null): Promise<void> {
    this.#stopPing();
    const previous = this.#mode;
    // The old session's stream (if it still runs) must not relay beside the new one.
    if (previous.kind === 'bridge') previous.bridge.closeStream();
    const hint = peerHint ?? (previous.kind === 'owner' || previous.kind === 'alone' ? previous.session.peerId : null);
    for (let round = 0; round < MAX_REJOINS; round += 1) {
      let outcome;
      try {
        outcome = await elect({ checkout: this.#options.checkout });
      } catch (error) {
        if (!(error instanceof LeaseUnavailable)) throw error;
        log.warn(`cannot use the shared server: ${error.message}; serving this client alone`);
        await this.#serveAlone(pending, initial, hint, null);
        return;
      }
      if (outcome.role === 'bridge') {
        if (await this.#attach(outcome.url, outcome.token, pending, hint)) return;
        continue;
      }
      await this.#own(outcome, pending, initial, hint);
      return;
    }
    this.#mode = { kind: 'failed', why: 'the shared server kept disappearing during the election' };
  }

  async #attach(url: string, token: string, pending: string | null, hint: string | null): Promise<boolean> {
    // Its session's stream opens once the replayed initialize succeeds, and is relayed to the client.
    const bridge = new HttpBridge(url, token, (frame) => this.#streamWrite?.(frame));
    for (const line of this.#replay.lines(pending)) {
      const delivery = await bridge.deliver(line, { peerHint: this.#replay.isInitialize(line) ? hint : null });
      if (delivery.kind === 'lost') {
        bridge.closeStream();
        return false;
      }
    }
    this.#mode = { kind: 'bridge', bridge };
    log.info(`attached to the shared server ${url} as a bridge (its options apply to this session)`);
    this.#startPing();
    return true;
  }

  async #own(elected: Elected, pending: string | null, initial: boolean, hint: string | null): Promise<void> {
    const { lease, predecessor, lock } = elected;
    this.#electedLease = lease;
    const { serveOnLease, CannotShare } = await import('./owner.js');
    let owner: Owner;
    try {
      owner = await serveOnLease({
        checkout: this.#options.checkout,
        lease,
        predecessor,
        lock,
        host: this.#options.host,
        port: this.#options.port,
        load: () => this.#load(),
      });
    } catch (error) {
      if (error instanceof CannotShare) {
        log.warn(`cannot use the shared server: ${error.message}; serving this client alone`);
        await this.#serveAlone(pending, initial, hint, error.loaded);
        return;
      }
      if (initial || !(error instanceof MajordomusError)) throw error;
      this.#mode = { kind: 'failed', why: `this process cannot serve the layer (${error.code}: ${error.message})` };
      log.error(this.#mode.why);
      return;
    } finally {
      this.#electedLease = null;
    }
    const session = owner.session(hint);
    for (const line of this.#replay.lines(pending)) await session.handleText(line);
    if (this.#streamWrite) session.streamTo(this.#streamWrite);
    this.#mode = { kind: 'owner', owner, session };
    if (!initial) log.warn(`took over as the shared server of ${this.#options.checkout.root}`);
  }

  async #serveAlone(pending: string | null, initial: boolean, hint: string | null, loaded: Loaded | null): Promise<void> {
    try {
      const layer = loaded ?? (await this.#load());
      const { aloneSession } = await import('./alone.js');
      const session = aloneSession(layer, hint);
      for (const line of this.#replay.lines(pending)) await session.handleText(line);
      if (this.#streamWrite) session.streamTo(this.#streamWrite);
      this.#mode = { kind: 'alone', session };
    } catch (error) {
      if (initial) throw error;
      this.#mode = { kind: 'failed', why: `this process cannot serve the layer (${errorMessage(error)})` };
      log.error(this.#mode.why);
    }
  }

  async #load(): Promise<Loaded> {
    const { loadServing } = await import('../runtime/load.js');
    return loadServing(this.#options.global, this.#options.cwd);
  }

  #startPing(): void {
    const every = settings().pingMs;
    this.#ping = setInterval(() => {
      const mode = this.#mode;
      if (mode.kind !== 'bridge' || mode.bridge.sessionId === null) return;
      this.#pings += 1;
      const line = JSON.stringify({ jsonrpc: '2.0', id: `majordomus-bridge-ping-${this.#pings}`, method: 'ping' });
      void (async () => {
        if (this.#election !== null || this.#mode !== mode) return;
        const delivery = await mode.bridge.deliver(line);
        if (delivery.kind === 'lost' && !this.#closing) await this.#reelect(mode, null, mode.bridge.peerId, delivery.why);
      })().catch((error: unknown) => log.error(`the keep-alive ping failed: ${errorMessage(error)}`));
    }, every);
    this.#ping.unref();
  }

  #stopPing(): void {
    if (this.#ping) clearInterval(this.#ping);
    this.#ping = null;
  }
}
