/**
 * The harness's files under `<local>/state/harness/` (untracked, 0700): per session a
 * `session.json` breadcrumb, and per turn `turns/N/{transcript.jsonl, stderr.log, done.json}`.
 * They are what a successor server adopts after a takeover and what a person reads afterwards.
 * Every JSON document is written whole (temporary file, then rename): a reader never sees half.
 */
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { AgentName } from './types.js';

export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** How a session's turns are launched: replayed for every turn (a follow-up never loses its cwd). */
export interface LaunchRecord {
  /** Relative to the checkout's root; '' is the root. */
  cwd: string;
  model?: string;
  effort?: string;
  mode?: string;
  args: string[];
}

export interface SessionRecord {
  session: string;
  profile: string;
  agent: AgentName;
  launch: LaunchRecord;
  /** The current turn's process, its group and start time (`/proc/PID/stat` field 22). */
  pid: number | null;
  pgid: number | null;
  startTicks: string | null;
  /** The server process that owns the session, and its start time. */
  ownerPid: number;
  ownerStartTicks: string | null;
  createdAt: string;
  /** When the current turn started. */
  startedAt: string;
  turn: number;
  /** The vendor's own session id, for resume. Never on the wire. */
  vendorId?: string;
  /** The peer that spawned the session (a peer id), when one did: where its task's notices go. */
  spawnedBy?: string;
}

export type TurnStatus = 'running' | 'exited' | 'killed' | 'steered' | 'lost';

/** How a turn ended; written before the session's state changes, one per turn. */
export interface TurnDone {
  turn: number;
  status: Exclude<TurnStatus, 'running'>;
  exitCode: number | null;
  signal: string | null;
  answer: string | null;
  /** Why the turn failed (an error event, a launch failure, …). */
  error: string | null;
  startedAt: string;
  endedAt: string;
}

/** Where a turn's files are, relative to the checkout (`sessionInfo.files`, `session_status.files`). */
export interface TurnFiles {
  dir: string;
  turnsDir: string;
  turn: number;
  turnDir: string;
  transcript: string;
  stderr: string;
  done: string;
  breadcrumb: string;
}

export interface StoredSession {
  record: SessionRecord;
  /** Every turn directory, by number, with its done.json if it has one. */
  turns: Array<{ turn: number; done: TurnDone | null }>;
}

async function writeWhole(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

async function readJson<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

export class SessionStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  sessionDir(session: string): string {
    return join(this.dir, session);
  }

  turnDir(session: string, turn: number): string {
    return join(this.dir, session, 'turns', String(turn));
  }

  transcriptPath(session: string, turn: number): string {
    return join(this.turnDir(session, turn), 'transcript.jsonl');
  }

  stderrPath(session: string, turn: number): string {
    return join(this.turnDir(session, turn), 'stderr.log');
  }

  /** The session's and the turn's files, relative to `root` (what a caller is shown). */
  turnFiles(root: string, session: string, turn: number): TurnFiles {
    const shown = (path: string): string => relative(root, path);
    const turnDir = this.turnDir(session, turn);
    return {
      dir: shown(this.sessionDir(session)),
      turnsDir: shown(join(this.sessionDir(session), 'turns')),
      turn,
      turnDir: shown(turnDir),
      transcript: shown(this.transcriptPath(session, turn)),
      stderr: shown(this.stderrPath(session, turn)),
      done: shown(join(turnDir, 'done.json')),
      breadcrumb: shown(join(this.sessionDir(session), 'session.json')),
    };
  }

  /** How many bytes the turn's transcript holds; 0 when it has none (yet, or any more). */
  async transcriptSize(session: string, turn: number): Promise<number> {
    try {
      return (await stat(this.transcriptPath(session, turn))).size;
    } catch {
      return 0;
    }
  }

  /** Creates the turn's directory (and the session's, 0700) with empty transcript and stderr files. */
  async prepareTurn(session: string, turn: number): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await mkdir(this.turnDir(session, turn), { recursive: true, mode: 0o700 });
    for (const path of [this.transcriptPath(session, turn), this.stderrPath(session, turn)]) {
      await (await open(path, 'a', 0o600)).close();
    }
  }

  saveRecord(record: SessionRecord): Promise<void> {
    return writeWhole(join(this.sessionDir(record.session), 'session.json'), record);
  }

  writeDone(session: string, done: TurnDone): Promise<void> {
    return writeWhole(join(this.turnDir(session, done.turn), 'done.json'), done);
  }

  remove(session: string): Promise<void> {
    return rm(this.sessionDir(session), { recursive: true, force: true });
  }

  /** Every session found on disk (what a successor adopts); unreadable ones are skipped. */
  async readAll(): Promise<StoredSession[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const found: StoredSession[] = [];
    for (const name of names) {
      if (!SESSION_ID.test(name)) continue;
      const record = await readJson<SessionRecord>(join(this.dir, name, 'session.json'));
      if (record === null || record.session !== name) continue;
      const turns: StoredSession['turns'] = [];
      const turnNames = await readdir(join(this.dir, name, 'turns')).catch(() => [] as string[]);
      for (const turnName of turnNames) {
        const turn = Number(turnName);
        if (!Number.isInteger(turn) || turn < 1) continue;
        turns.push({ turn, done: await readJson<TurnDone>(join(this.turnDir(name, turn), 'done.json')) });
      }
      turns.sort((a, b) => a.turn - b.turn);
      found.push({ record, turns });
    }
    return found;
  }
}
