/**
 * The shared server of a checkout, owned by the process that won the election: the layer and
 * registry in this (main) thread, the HTTP projection in its own thread, the lease published once
 * bound and watched while serving.
 *
 * What changes while it serves (the peer numbers issued, the announcements) is saved in
 * `board.json` beside the lease, for a successor after a crash.
 *
 * A live owner keeps its lease in place (src/hub/lease-keeper.ts); a valid lease naming another
 * live server supersedes this one: it then answers `leaseholder: false`, takes no new sessions and
 * keeps the ones it has.
 */
import { log } from '../platform/log.js';
import { localSession } from '../mcp/local-backend.js';
import type { McpSession } from '../mcp/session.js';
import type { PeerNotice } from '../peers/notice.js';
import { BoardFile, boardPathFor, loadSavedBoard } from '../peers/board-file.js';
import { PeerBoard } from '../peers/board.js';
import { Coordination } from '../coordination/coordination.js';
import { openSharedBoard } from '../board/open.js';
import type { SharedBoard } from '../board/replica.js';
import type { CheckoutSession } from '../board/schemas.js';
import type { CallOutcome } from '../platform/call.js';
import { randomBytes } from 'node:crypto';
import type { Loaded } from '../runtime/load.js';
import { Runtime } from '../runtime/runtime.js';
import { settings } from '../platform/settings.js';
import { startHttpThread, type HttpThread } from './http-thread.js';
import { startHarnessThread, type HarnessThread } from './harness-thread.js';
import { startFreshness, type Generation, type LayerFreshness } from './layer-thread.js';
import { dirname, join } from 'node:path';
import { isLoopbackHost } from '../platform/access.js';
import type { Predecessor } from '../shared/election.js';
import { releaseLeaseSync, type LeaseDocument } from '../shared/lease.js';
import type { Checkout } from '../shared/locate.js';
import type { ServerLock } from '../shared/server-lock.js';
import { runtimeSnapshot } from '../threads/snapshot.js';
import { LeaseKeeper } from './lease-keeper.js';

export interface OwnerOptions {
  loaded: Loaded;
  checkout: Checkout;
  lease: LeaseDocument;
  host: string;
  port: number;
  /** What the servers this one took over from left behind. */
  predecessor: Predecessor;
  /** The server lock the election took; null when it took over without it (then taken later). */
  lock: ServerLock | null;
}

/**
 * The server cannot start (no port, no HTTP engine, a thread that died); `loaded` lets the caller
 * serve its client alone, `cause` is the failure (a `MajordomusError` names its code).
 */
export class CannotShare extends Error {
  override name = 'CannotShare';
  constructor(
    message: string,
    readonly loaded: Loaded,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Having won the election: load the layer, then start the server on the lease. Whatever fails,
 * the lease is released before the error reaches the caller (a layer error as it is, a server
 * that cannot start as `CannotShare`).
 */
export async function serveOnLease(options: Omit<OwnerOptions, 'loaded'> & { load: () => Promise<Loaded> }): Promise<Owner> {
  const release = (): void => {
    releaseLeaseSync(options.checkout.leasePath, options.lease.token);
    options.lock?.release();
  };
  let loaded: Loaded;
  try {
    loaded = await options.load();
  } catch (error) {
    release();
    throw error;
  }
  try {
    return await Owner.start({ ...options, loaded });
  } catch (error) {
    release();
    throw error;
  }
}

/** The session table's list as the shared board shows it (the rows of `harness.session_list`). */
function sessionRows(outcome: CallOutcome): CheckoutSession[] {
  if (!outcome.ok) return [];
  const list = JSON.parse(outcome.json) as { sessions?: CheckoutSession[] };
  return (list.sessions ?? []).map(({ session, profile, agent, status, createdAt, lastTurnAt }) => ({ session, profile, agent, status, createdAt, lastTurnAt }));
}

export class Owner {
  readonly runtime: Runtime;
  readonly #http: HttpThread;
  readonly #harness: HarnessThread;
  /** The owner's own stdio sessions (one, while its client is attached). */
  readonly #localSessions = new Set<McpSession>();
  readonly #lease: LeaseKeeper;
  readonly #boardFile: BoardFile;
  /** The board shared with the repository's other checkouts; null while this checkout is alone. */
  #shared: SharedBoard | null = null;
  /** Watches the layer and builds its next generations (off this thread). */
  #freshness: LayerFreshness | null = null;
  #idleWaiters: Array<() => void> = [];
  #closing: Promise<void> | null = null;

  private constructor(runtime: Runtime, http: HttpThread, harness: HarnessThread, options: OwnerOptions, boardFile: BoardFile) {
    this.runtime = runtime;
    this.#http = http;
    this.#harness = harness;
    this.#lease = new LeaseKeeper({ checkout: options.checkout, lease: options.lease, lock: options.lock, onSuperseded: () => http.setLeaseholder(false) });
    this.#boardFile = boardFile;
  }

  /** Binds the HTTP projection and publishes the lease; CannotShare when the server cannot start. */
  static async start(options: OwnerOptions): Promise<Owner> {
    const { checkout, lease } = options;
    let url: string | null = null;
    let owner: Owner | null = null;
    const boardPath = boardPathFor(checkout.leasePath);
    const saved = await loadSavedBoard(boardPath, options.predecessor.token);
    const board = new PeerBoard({ issuedBefore: saved.issued, restorable: saved.announcements, onChange: () => owner?.boardChanged() });
    // A successor carries on its predecessor's lineage: the claims and inboxes it left come back.
    const epoch = saved.epoch ?? randomBytes(6).toString('hex');
    const coordination = await Coordination.open({
      root: options.loaded.layer.index.root,
      board,
      epoch,
      journalDir: join(checkout.localPath, 'coordination'),
      notify: (notice) => {
        if (owner) void owner.#deliver(notice);
      },
      onChange: () => owner?.pageChanged(),
    });
    // Every worktree of the repository (and, federated, every checkout) shares claims, messages and peers.
    const shared = await openSharedBoard({ root: options.loaded.layer.index.root, board, coordination, onChange: () => owner?.remoteChanged() });
    let harness: HarnessThread | null = null;
    const runtime = new Runtime({
      ...options.loaded,
      board,
      coordination,
      sharedBoard: shared,
      url: () => url,
      faultCapability: settings().faultCapability,
      remoteHarness: (capabilityId, input, caller, call) => (harness as HarnessThread).invoke(capabilityId, input, caller, call),
    });
    if (!isLoopbackHost(options.host)) {
      log.warn(`${options.host} is not a loopback address: other machines can reach this server (Host and Origin must still name it by IP; every request needs the token)`);
    }
    const snapshot = runtimeSnapshot(runtime);
    // The session table of the checkout: `<local>/state/harness`, beside the lease's directory.
    const harnessDir = join(dirname(dirname(checkout.leasePath)), 'harness');
    try {
      harness = await startHarnessThread({ snapshot, harnessDir });
    } catch (error) {
      await shared?.close();
      throw new CannotShare(error instanceof Error ? error.message : String(error), options.loaded, { cause: error });
    }
    let http: HttpThread;
    try {
      http = await startHttpThread(runtime, {
        snapshot,
        harnessPort: harness.httpPort,
        host: options.host,
        port: options.port,
        fallbackToFreePort: true,
        leaseholder: true,
        token: lease.token,
        root: checkout.root,
        localPath: checkout.localPath,
        onUnexpectedExit: (why) => owner?.threadDied(why),
      });
    } catch (error) {
      await harness.stop();
      await shared?.close();
      throw new CannotShare(error instanceof Error ? error.message : String(error), options.loaded, { cause: error });
    }
    url = http.url;
    owner = new Owner(runtime, http, harness, options, new BoardFile(boardPath, lease.token, epoch));
    owner.#shared = shared;
    coordination.startExpiring();
    const swapping = owner;
    owner.#freshness = startFreshness({
      snapshot,
      discovery: runtime.layer.index.discovery,
      localPath: checkout.localPath,
      onGeneration: (next) => swapping.#useGeneration(next),
    });
    const delivering = owner;
    harness.onNotice((notice) => void delivering.#deliver(notice));
    // The other checkouts see this one's sessions (read-only), as the session table says at each heartbeat.
    const table = harness;
    shared?.showSessions(async () => sessionRows(await table.invoke('harness.session_list', {}, null)));
    // A turn started or ended: this process's own client hears what it subscribed to, and of its tasks.
    harness.onNews((news) => {
      for (const session of delivering.#localSessions) {
        session.resourcesChanged(news.uris);
        session.tasksEnded(news.endedTasks);
      }
    });
    owner.boardChanged(); // the numbering taken over is carried on at once
    if (http.fellBackFrom !== null) log.info(`port ${http.fellBackFrom} is taken; bound ${http.port} instead`);
    lease.url = http.url;
    await owner.#lease.publish();
    log.info(`serving ${url} — Swagger UI ${url}/docs · OpenAPI ${url}/openapi.json · API ${url}/api/v1/ · MCP ${url}/mcp`);
    return owner;
  }

  get url(): string {
    return this.#http.url;
  }

  /** The owner's own stdio session. */
  session(preferredPeerId: string | null): McpSession {
    const session = localSession(this.runtime, preferredPeerId, (pids) => this.#harness.agentDepth(pids));
    this.#localSessions.add(session);
    return session;
  }

  /** A notice for a peer: its own stdio session when it is the owner's client, else its `/mcp` sessions. */
  async #deliver(notice: PeerNotice): Promise<void> {
    const { fallback } = notice;
    for (const session of this.#localSessions) {
      if (session.peerId === notice.peer) {
        if (!session.notify(notice.method, notice.params, notice.requires) && fallback) session.notify(fallback.method, fallback.params);
        return;
      }
    }
    const taken = await this.#http.notifyPeer(notice.peer, notice.method, notice.params, notice.requires).catch(() => false);
    if (!taken && fallback) await this.#http.notifyPeer(notice.peer, fallback.method, fallback.params, null).catch(() => false);
  }

  /**
   * A new generation of the layer: this thread serves it first, then the HTTP and harness threads
   * (each drops what it remembered of the old one, and the HTTP thread tells its `/mcp` sessions);
   * then this process's own stdio session hears what changed.
   */
  async #useGeneration(next: Generation): Promise<void> {
    if (this.#closing) return;
    this.runtime.useGeneration(next.generation, next.layer);
    await Promise.all([this.#http.useSnapshot(next.snapshot, next.generation), this.#harness.useSnapshot(next.snapshot, next.generation)]);
    for (const session of this.#localSessions) session.layerChanged(next.changed);
  }

  /** Resolves once no peer is attached. */
  whenNoPeers(): Promise<void> {
    if ((this.runtime.board?.size ?? 0) === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Removes the lease if it is still ours, then lets go of the lock; synchronous for the signal path. */
  releaseLease(): void {
    this.#lease.release();
  }

  /** Closes the port, the sessions and the pool, then removes the lease. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#lease.stop();
      // No new generation is served from here on; a swap under way finishes after the lease is gone.
      const freshnessStopped = this.#freshness?.stop();
      // The lease goes first, from this thread: stopping the HTTP thread can take a while on a
      // busy machine (it runs at a lower priority), and a client that kills us meanwhile must not
      // leave a lease behind. Then new sessions are refused (409 lease_lost: a client arriving
      // now elects again and is served elsewhere) instead of being cut off by the closing socket.
      await this.#lease.settled();
      await this.#handOffIfPeersRemain();
      this.releaseLease();
      await freshnessStopped;
      await this.#boardFile.remove();
      this.runtime.coordination?.close();
      await this.#shared?.close();
      await this.#http.setLeaseholder(false);
      // Every agent's process group goes with the server (graceful shutdown).
      await this.#harness.stop();
      await this.#http.stop();
      log.info(`closed ${this.#http.url} and removed the lease`);
    })();
    return this.#closing;
  }

  /**
   * Stopping (a signal) while other peers are attached: they elect the next server at once, so the
   * board and the journals are made complete for it before the lease goes. This process's own
   * client goes with it: its claims end.
   */
  async #handOffIfPeersRemain(): Promise<void> {
    const board = this.runtime.board;
    const own = new Set([...this.#localSessions].map((s) => s.peerId));
    const remaining = board?.local().filter((p) => !own.has(p.id)) ?? [];
    if (!board || remaining.length === 0) return;
    for (const peer of own) if (peer !== null) this.runtime.coordination?.peerLeft(peer);
    this.runtime.coordination?.close();
    await this.#boardFile.handOff({ issued: board.issued, announcements: board.announcements() });
  }

  /** The HTTP thread died: nobody can reach this server, so give the checkout back. */
  threadDied(why: string): void {
    if (this.#closing) return;
    log.error(`the HTTP thread ended unexpectedly (${why}); releasing the lease and serving this client alone (the layer is no longer refreshed)`);
    this.#lease.stop();
    void this.#freshness?.stop();
    this.releaseLease();
    this.#closing = Promise.all([this.#boardFile.remove(), this.#shared?.close()]).then(() => undefined);
    for (const peer of this.runtime.board?.local() ?? []) if (peer.transport === 'http') this.runtime.leave(peer.id);
  }

  /** Another checkout's peers, claims or messages changed: open live pages get them again. */
  remoteChanged(): void {
    if (this.#closing) return;
    this.#http.changed('peers');
    this.#http.changed('coordination');
  }

  /** Claims or messages changed: open live pages get them again. */
  pageChanged(): void {
    if (!this.#closing) this.#http.changed('coordination');
  }

  /** The board changed (a peer joined, left or announced): the thread's count, the saved board. */
  boardChanged(): void {
    const board = this.runtime.board;
    if (!board) return;
    if (!this.#closing) {
      this.#shared?.presenceChanged();
      void this.#http.setPeerCount(board.size).catch(() => undefined);
      this.#http.changed('peers');
      this.#boardFile.save(() => ({ issued: board.issued, announcements: board.announcements() }));
    }
    if (board.size > 0) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
