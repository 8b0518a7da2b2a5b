/**
 * The owner's board, saved beside its lease (`board.json`, mode 0600) so that a server taking
 * over from a dead one continues its peer numbering (a bridge that re-attaches finds its old id
 * free) and gives each re-attaching peer back what it announced. The file names the token of the
 * lease it belongs to: a successor restores its lineage (announcements, epoch) only when it took
 * over exactly that lease, so an old file from another server is never restored — but any server
 * numbers its peers past what any board says was issued: a peer id is never given to two clients.
 * Written by the owner alone, whole (temp + rename), after every change, coalesced.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { log } from '../platform/log.js';
import { AnnouncementSchema, type Announcement } from './schema.js';

export const BOARD_FILE_SCHEMA = 'majordomus-board/v1';

const SavedBoardSchema = z.object({
  schema: z.literal(BOARD_FILE_SCHEMA),
  token: z.string(),
  /** The highest peer number issued. */
  peers_issued: z.number().int().min(0),
  peers: z.array(z.object({ id: z.string().regex(/^p[1-9]\d{0,8}$/), announcement: AnnouncementSchema })).max(100_000),
  /** The server lineage the claims and messages journals are keyed by (absent in older files). */
  epoch: z.string().regex(/^[0-9a-f]{1,64}$/).optional(),
  /** Written by a server that stopped while peers were attached: whoever serves them next carries on. */
  handed_off_at: z.string().optional(),
});

/** How long a handed-off board waits for the server its peers elect next. */
export const HANDOFF_WINDOW_MS = 60_000;

/** What a successor takes from a saved board. */
export interface SavedBoard {
  /** The highest peer number the saved board issued, whoever saved it: numbering carries on past it. */
  issued: number;
  announcements: Map<string, Announcement>;
  /** The lineage to carry on; null when nothing was taken over. */
  epoch: string | null;
}

/** What the owner saves. */
export interface BoardState {
  issued: number;
  announcements: ReadonlyArray<{ id: string; announcement: Announcement }>;
}

const NOTHING_SAVED = (): SavedBoard => ({ issued: 0, announcements: new Map(), epoch: null });

/** The board file of the lease at `leasePath`. */
export function boardPathFor(leasePath: string): string {
  return join(dirname(leasePath), 'board.json');
}

/**
 * The board saved by the server whose lease carried `token`, or handed off by a server that
 * stopped with peers attached less than a minute ago; otherwise only how far it numbered.
 */
export async function loadSavedBoard(path: string, token: string | null, now = Date.now()): Promise<SavedBoard> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return NOTHING_SAVED();
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    log.warn(`ignoring ${path}: not JSON`);
    return NOTHING_SAVED();
  }
  const parsed = SavedBoardSchema.safeParse(value);
  if (!parsed.success) {
    log.warn(`ignoring ${path}: not a ${BOARD_FILE_SCHEMA} document`);
    return NOTHING_SAVED();
  }
  const handedOff = parsed.data.handed_off_at === undefined ? NaN : now - Date.parse(parsed.data.handed_off_at);
  if (parsed.data.token !== token && !(handedOff >= 0 && handedOff <= HANDOFF_WINDOW_MS)) return { ...NOTHING_SAVED(), issued: parsed.data.peers_issued };
  return {
    issued: parsed.data.peers_issued,
    announcements: new Map(parsed.data.peers.map((p) => [p.id, p.announcement])),
    epoch: parsed.data.epoch ?? null,
  };
}

export class BoardFile {
  readonly #path: string;
  readonly #token: string;
  readonly #epoch: string;
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;
  #removed = false;

  constructor(path: string, token: string, epoch: string) {
    this.#path = path;
    this.#token = token;
    this.#epoch = epoch;
  }

  /** Saves the board soon; saves asked for while one is being written collapse into one. */
  save(state: () => BoardState): void {
    if (this.#removed || this.#dirty) return;
    this.#dirty = true;
    this.#writing = this.#writing.then(async () => {
      this.#dirty = false;
      if (this.#removed) return;
      const { issued, announcements } = state();
      const board = { schema: BOARD_FILE_SCHEMA, token: this.#token, epoch: this.#epoch, peers_issued: issued, peers: announcements };
      const text = `${JSON.stringify(board)}\n`;
      const temp = `${this.#path}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await writeFile(temp, text, { mode: 0o600 });
        await rename(temp, this.#path);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        log.debug(`cannot save the board at ${this.#path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }

  /**
   * A stop with peers still attached: they elect a new server at once, which carries on from
   * this board (written before the lease goes, after any save under way).
   */
  async handOff(state: BoardState): Promise<void> {
    this.#removed = true;
    await this.#writing;
    const board = { schema: BOARD_FILE_SCHEMA, token: this.#token, epoch: this.#epoch, peers_issued: state.issued, peers: state.announcements, handed_off_at: new Date().toISOString() };
    const temp = `${this.#path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify(board)}\n`, { mode: 0o600 });
      renameSync(temp, this.#path);
    } catch (error) {
      rmSync(temp, { force: true });
      log.warn(`cannot hand the board off at ${this.#path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A clean end: nobody will take over, so nothing is left to restore. */
  async remove(): Promise<void> {
    if (this.#removed) return; // removed already, or handed off to the next server
    this.#removed = true;
    await this.#writing;
    await rm(this.#path, { force: true }).catch(() => undefined);
  }
}
