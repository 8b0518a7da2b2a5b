/**
 * What the harness thread serves from: the checkout's session table, the task board over it, and a
 * runtime that runs the harness capabilities against both, one generation of the layer at a time.
 * The table's news (a session changed) and the board's (a notice for a peer) fan out to whoever
 * listens; src/hub/harness-service.ts turns them into the events of `HarnessControl`.
 */
import type { LayerView } from '../layer/view.js';
import type { PeerNotice } from '../peers/notice.js';
import { errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { SessionStore } from '../harness/store.js';
import { turnEndNotice } from '../harness/turn-notice.js';
import { Harness, type HarnessNews } from '../harness/table.js';
import { TaskBoard } from '../tasks/board.js';
import { BUILTIN_CAPABILITIES } from '../capabilities/index.js';
import { buildRegistry } from '../registry/registry.js';
import type { UsageRecord } from '../tasks/usage.js';
import { Runtime } from './runtime.js';

export interface HarnessRuntimeOptions {
  layer: LayerView;
  generation: number;
  /** `<local>/state/harness` of the checkout. */
  harnessDir: string;
  /** The server's own delegation depth. */
  depth: number;
  faultCapability: string | null;
  /** Between SIGTERM and SIGKILL when a turn is stopped. */
  killGraceMs: number;
}

export class HarnessRuntime {
  readonly harness: Harness;
  readonly tasks: TaskBoard;
  readonly runtime: Runtime;
  readonly #noticeListeners = new Set<(notice: PeerNotice) => void>();
  readonly #changeListeners = new Set<(session: string) => void>();
  readonly #newsListeners = new Set<(news: HarnessNews) => void>();

  constructor(options: HarnessRuntimeOptions) {
    const { layer, generation } = options;
    // The board is made after the table it reads; a turn cannot end before both exist.
    let tasks: TaskBoard | null = null;
    this.harness = new Harness({
      root: layer.index.root,
      layer,
      store: new SessionStore(options.harnessDir),
      depth: options.depth,
      killGraceMs: options.killGraceMs,
      onChange: (session) => this.#changeListeners.forEach((tell) => tell(session)),
      onNews: (news) => this.#newsListeners.forEach((tell) => tell(news)),
      onTurnEnd: (session, turn) => {
        this.#tellSpawner(session, turn);
        void tasks?.turnEnded(session).catch((error: unknown) => log.warn(`task notice for ${session} failed: ${errorMessage(error)}`));
      },
    });
    tasks = new TaskBoard({ harness: this.harness, notify: (notice) => this.#noticeListeners.forEach((deliver) => deliver(notice)) });
    this.tasks = tasks;
    this.runtime = new Runtime({
      registry: buildRegistry(BUILTIN_CAPABILITIES),
      layer,
      generation,
      board: null,
      harness: this.harness,
      tasks,
      url: () => null,
      faultCapability: options.faultCapability,
    });
  }

  /** The peer that spawned the session hears that its turn ended (an executor task's, from the task board). */
  #tellSpawner(session: string, turn: number): void {
    let notice: PeerNotice | null;
    try {
      notice = turnEndNotice(this.harness.turnsOf(session), turn);
    } catch {
      return; // reaped meanwhile
    }
    if (notice !== null) for (const deliver of this.#noticeListeners) deliver(notice);
  }

  /** Hands each notice for a peer (a task asked or ended, a turn ended) to `deliver`; answers the unsubscribe. */
  onNotice(deliver: (notice: PeerNotice) => void): () => void {
    this.#noticeListeners.add(deliver);
    return () => this.#noticeListeners.delete(deliver);
  }

  /**
   * Tells `tell` of each session that changed (started, grew, ended a turn, went), and of each
   * request the gateway counted (its task, or ''): the live page shows both. Answers the unsubscribe.
   */
  onChange(tell: (session: string) => void): () => void {
    this.#changeListeners.add(tell);
    return () => this.#changeListeners.delete(tell);
  }

  /** Tells `tell` what each turn's start or end and each session's going means to readers; answers the unsubscribe. */
  onNews(tell: (news: HarnessNews) => void): () => void {
    this.#newsListeners.add(tell);
    return () => this.#newsListeners.delete(tell);
  }

  /** The layer generation served. */
  get generation(): number {
    return this.runtime.generation;
  }

  /** Serves a newer generation of the layer (the profiles and policy agents start from); an older one changes nothing. */
  useGeneration(generation: number, layer: LayerView): void {
    if (generation <= this.runtime.generation) return;
    this.harness.useLayer(layer);
    this.runtime.useGeneration(generation, layer);
  }

  /** Counts one request the gateway forwarded. */
  recordUsage(record: UsageRecord): void {
    this.tasks.recordUsage(record);
    this.#changeListeners.forEach((tell) => tell(record.task ?? ''));
  }

  /** Takes over the sessions an earlier server left (docs/HARNESS.md, "Orphans"); throws when they cannot be read. */
  async adopt(): Promise<void> {
    const adopted = await this.harness.adopt();
    if (adopted.adopted > 0) {
      log.info(`adopted ${adopted.adopted} agent sessions left by an earlier server (${adopted.lost} turns lost, ${adopted.killed} orphaned process groups killed)`);
    }
  }

  /** Stops every running agent's process group. */
  stop(): Promise<void> {
    return this.harness.stop();
  }
}
