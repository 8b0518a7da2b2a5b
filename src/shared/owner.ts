/**
 * The shared server of a checkout, owned by the process that won the election: the layer and
 * registry in this (main) thread, the HTTP projection in its own thread, the lease published once
 * bound and watched while serving. A server whose lease was taken over is superseded: it answers
 * `leaseholder: false`, takes no new sessions and keeps the ones it has.
 */
import { log } from '../log.js';
import { localBackend } from '../mcp/local-backend.js';
import { McpSession } from '../mcp/session.js';
import { PeerBoard } from '../peers/board.js';
import type { Loaded } from '../runtime/load.js';
import { Runtime } from '../runtime/runtime.js';
import { startHttpThread, type HttpThread } from '../http/thread.js';
import { isLoopbackHost } from '../http/guard.js';
import { publishLease, readLease, releaseLeaseSync, type LeaseDocument } from './lease.js';

const LEASE_WATCH_MS = 2_000;

export interface OwnerOptions {
  loaded: Loaded;
  lease: LeaseDocument;
  leasePath: string;
  host: string;
  port: number;
  /** Peer numbers already given out by the servers this one took over from. */
  peersIssued?: number;
}

export class CannotShare extends Error {
  override name = 'CannotShare';
}

export class Owner {
  readonly runtime: Runtime;
  readonly #http: HttpThread;
  readonly #lease: LeaseDocument;
  readonly #leasePath: string;
  #watch: NodeJS.Timeout | null = null;
  #idleWaiters: Array<() => void> = [];
  #closing: Promise<void> | null = null;
  #publishing: Promise<unknown> = Promise.resolve();
  #missedChecks = 0;

  private constructor(runtime: Runtime, http: HttpThread, lease: LeaseDocument, leasePath: string) {
    this.runtime = runtime;
    this.#http = http;
    this.#lease = lease;
    this.#leasePath = leasePath;
  }

  /** Binds the HTTP projection and publishes the lease; CannotShare when the server cannot start. */
  static async start(options: OwnerOptions): Promise<Owner> {
    let url: string | null = null;
    const board = new PeerBoard({ issuedBefore: options.peersIssued ?? 0 });
    const runtime = new Runtime({ ...options.loaded, board, url: () => url, onPeersChanged: () => owner?.peersChanged() });
    let owner: Owner | null = null;
    if (!isLoopbackHost(options.host)) {
      log.warn(`${options.host} is not a loopback address: other machines can reach this server (Host and Origin must still name it by IP)`);
    }
    let http: HttpThread;
    try {
      http = await startHttpThread(runtime, {
        host: options.host,
        port: options.port,
        fallbackToFreePort: true,
        leaseholder: true,
        onUnexpectedExit: (why) => owner?.threadDied(why),
      });
    } catch (error) {
      throw new CannotShare(error instanceof Error ? error.message : String(error));
    }
    url = http.url;
    owner = new Owner(runtime, http, options.lease, options.leasePath);
    if (http.fellBackFrom !== null) log.info(`port ${http.fellBackFrom} is taken; bound ${http.port} instead`);
    options.lease.url = http.url;
    if (!(await publishLease(options.leasePath, options.lease))) {
      await owner.#superseded('the lease was taken over while this server was binding');
    } else {
      const watched = owner;
      owner.#watch = setInterval(() => void watched.#checkLease(), LEASE_WATCH_MS);
      owner.#watch.unref();
    }
    log.info(`serving ${url} — Swagger UI ${url}/docs · OpenAPI ${url}/openapi.json · API ${url}/api/v1/ · MCP ${url}/mcp`);
    return owner;
  }

  get url(): string {
    return this.#http.url;
  }

  /** The owner's own stdio session. */
  session(preferredPeerId?: string): McpSession {
    return new McpSession(localBackend(this.runtime, 'stdio'), preferredPeerId ? { preferredPeerId } : {});
  }

  /** Resolves once no peer is attached. */
  whenNoPeers(): Promise<void> {
    if ((this.runtime.board?.size ?? 0) === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Removes the lease if it is still ours; synchronous for the signal path. */
  releaseLease(): void {
    releaseLeaseSync(this.#leasePath, this.#lease.token);
  }

  /** Closes the port, the sessions and the pool, then removes the lease. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#watch) clearInterval(this.#watch);
      // The lease goes first, from this thread: stopping the HTTP thread can take a while on a
      // busy machine (it runs at a lower priority), and a client that kills us meanwhile must not
      // leave a lease behind. Then new sessions are refused (409 lease_lost: a client arriving
      // now elects again and is served elsewhere) instead of being cut off by the closing socket.
      await this.#publishing;
      this.releaseLease();
      await this.#http.setLeaseholder(false);
      await this.#http.stop();
      log.info(`closed ${this.#http.url} and removed the lease`);
    })();
    return this.#closing;
  }

  /** The HTTP thread died: nobody can reach this server, so give the checkout back. */
  threadDied(why: string): void {
    if (this.#closing) return;
    log.error(`the HTTP thread ended unexpectedly (${why}); releasing the lease and serving this client alone`);
    if (this.#watch) clearInterval(this.#watch);
    this.#watch = null;
    this.releaseLease();
    this.#closing = Promise.resolve();
    const board = this.runtime.board;
    for (const peer of board?.list() ?? []) if (peer.transport === 'http') this.runtime.leave(peer.id);
  }

  /** Called by the HTTP thread's host control when a peer joined or left. */
  peersChanged(): void {
    this.#recordIssuedPeers();
    if (!this.#closing) void this.#http.setPeerCount(this.runtime.board?.size ?? 0).catch(() => undefined);
    if ((this.runtime.board?.size ?? 0) > 0) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Keeps `peers_issued` in the lease current, so a successor never reissues a live id. */
  #recordIssuedPeers(): void {
    const issued = this.runtime.board?.issued ?? 0;
    if (issued <= (this.#lease.peers_issued ?? 0) || this.#closing || this.#watch === null) return;
    this.#lease.peers_issued = issued;
    this.#publishing = this.#publishing.then(() => publishLease(this.#leasePath, this.#lease)).catch(() => undefined);
  }

  async #checkLease(): Promise<void> {
    if (this.#closing) return;
    const reading = await readLease(this.#leasePath).catch(() => null);
    if (reading?.state === 'document' && reading.doc.token === this.#lease.token) {
      this.#missedChecks = 0;
      return;
    }
    // An election elsewhere moves a lease aside for an instant while it compares it; only a
    // foreign lease, or no lease twice in a row, means this server was superseded.
    const foreign = reading !== null && reading.state !== 'absent';
    this.#missedChecks += 1;
    if (!foreign && this.#missedChecks < 2) return;
    await this.#superseded(`the lease ${this.#leasePath} ${foreign ? 'now names another server' : 'is gone'}`);
  }

  async #superseded(why: string): Promise<void> {
    if (this.#watch) clearInterval(this.#watch);
    this.#watch = null;
    log.warn(`superseded: ${why}; keeping the sessions attached here, taking no new ones`);
    await this.#http.setLeaseholder(false);
  }
}
