/**
 * The board shared by the worktrees of one repository on one machine, in git's common directory
 * (`<common>/majordomus/board/`, 0700; files 0600): no broker and no server of its own, so a user
 * without NATS gets worktree sharing with nothing to run.
 *
 * - `claims.jsonl` is the claims ledger, one entry a line; a line's position is its sequence. An
 *   append that expects a position takes the lock beside the file (the lease's lock, exclusive
 *   create), reads what others appended, and writes only if nothing was (optimistic concurrency,
 *   as on the broker).
 * - `messages.jsonl` carries messages; a server reads it from where it was when it started.
 * - `presence/<checkout>.json` is each checkout's presence, rewritten on every change and every
 *   heartbeat, removed when its server stops; a file older than the presence TTL is a dead server.
 *
 * Everything is pushed by the kernel (fs.watch on the directory), never polled; every read goes to
 * the end of the file, so a missed notification costs only latency until the next one.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, watch, writeFileSync, writeSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { log } from '../platform/log.js';
import { uniqueSuffix, withLeaseLockBrief } from '../shared/lease-lock.js';
import type { BoardTransport, LedgerEntry, PresenceRecord, TransportAppend, TransportSink } from './contract.js';

/** A file read from where the last read stopped; a line cut mid-write waits for its end. */
class Tail {
  #offset: number;
  #partial = '';
  lines = 0;

  constructor(
    readonly path: string,
    fromEnd: boolean,
  ) {
    this.#offset = fromEnd ? sizeOf(path) : 0;
  }

  /** The complete lines appended since the last read. */
  read(): string[] {
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.#offset) {
        log.warn(`${this.path} shrank under a running server: reading it again from its start`);
        this.#offset = 0;
        this.#partial = '';
      }
      if (size === this.#offset) return [];
      const buffer = Buffer.alloc(size - this.#offset);
      let read = 0;
      while (read < buffer.length) {
        const n = readSync(fd, buffer, read, buffer.length - read, this.#offset + read);
        if (n === 0) break;
        read += n;
      }
      this.#offset += read;
      const text = this.#partial + buffer.subarray(0, read).toString('utf8');
      const lines = text.split('\n');
      this.#partial = lines.pop() ?? '';
      this.lines += lines.length;
      return lines;
    } finally {
      closeSync(fd);
    }
  }
}

function sizeOf(path: string): number {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

function parse(line: string): LedgerEntry | null {
  try {
    const entry = JSON.parse(line) as LedgerEntry;
    return entry && entry.v === 1 && typeof entry.origin === 'string' && typeof entry.label === 'string' && entry.event ? entry : null;
  } catch {
    return null;
  }
}

function appendLine(path: string, entry: LedgerEntry): void {
  // One write with O_APPEND: a line is never interleaved with another process's.
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(entry)}\n`);
  } finally {
    closeSync(fd);
  }
}

export class WorktreeTransport implements BoardTransport {
  readonly kind = 'worktrees' as const;
  readonly where: string;
  readonly #dir: string;
  readonly #self: string;
  readonly #presenceDir: string;
  #claims: Tail | null = null;
  #messages: Tail | null = null;
  #sink: TransportSink | null = null;
  #watchers: FSWatcher[] = [];
  #closed = false;

  /** `dir`: `<git common dir>/majordomus/board`; `self`: this checkout's id. */
  constructor(dir: string, self: string) {
    this.#dir = dir;
    this.where = dir;
    this.#self = self;
    this.#presenceDir = join(dir, 'presence');
  }

  now(): number {
    return Date.now();
  }

  async start(sink: TransportSink): Promise<void> {
    this.#sink = sink;
    mkdirSync(this.#presenceDir, { recursive: true, mode: 0o700 });
    const claimsPath = join(this.#dir, 'claims.jsonl');
    const messagesPath = join(this.#dir, 'messages.jsonl');
    for (const path of [claimsPath, messagesPath]) closeSync(openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
    this.#claims = new Tail(claimsPath, false);
    this.#messages = new Tail(messagesPath, true);
    this.#readClaims();
    for (const name of readdirSync(this.#presenceDir)) this.#readPresence(name);
    this.#watchers.push(
      watch(this.#dir, (_event, name) => {
        if (name === 'claims.jsonl') this.#readClaims();
        else if (name === 'messages.jsonl') this.#readMessages();
      }),
      watch(this.#presenceDir, (_event, name) => {
        if (typeof name === 'string') this.#readPresence(name);
      }),
    );
    for (const watcher of this.#watchers) {
      watcher.unref();
      watcher.on('error', (error) => log.warn(`cannot watch ${this.#dir} any more: ${error.message}`));
    }
    sink.reachable(true);
  }

  async catchUp(): Promise<void> {
    this.#readClaims();
  }

  async appendClaim(entry: LedgerEntry, expected: number): Promise<TransportAppend> {
    const tail = this.#claims;
    if (!tail || this.#closed) return 'unreachable';
    try {
      return await withLeaseLockBrief(tail.path, () => {
        this.#readClaims();
        if (tail.lines !== expected) return 'conflict' as const;
        appendLine(tail.path, entry);
        this.#readClaims();
        return 'granted' as const;
      });
    } catch (error) {
      log.warn(`cannot append to ${tail.path}: ${error instanceof Error ? error.message : String(error)}`);
      return 'unreachable';
    }
  }

  async publish(entry: LedgerEntry): Promise<boolean> {
    const tail = entry.event.event === 'message' ? this.#messages : this.#claims;
    if (!tail || this.#closed) return false;
    try {
      appendLine(tail.path, entry);
      if (tail === this.#claims) this.#readClaims();
      return true;
    } catch (error) {
      log.warn(`cannot append to ${tail.path}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  async putPresence(record: PresenceRecord): Promise<void> {
    if (this.#closed) return;
    const path = join(this.#presenceDir, `${this.#self}.json`);
    const temporary = `${path}.${uniqueSuffix()}.tmp`;
    writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
    renameSync(temporary, path);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const watcher of this.#watchers) watcher.close();
    rmSync(join(this.#presenceDir, `${this.#self}.json`), { force: true });
  }

  #readClaims(): void {
    const tail = this.#claims;
    if (!tail || !this.#sink) return;
    const lines = tail.read();
    const first = tail.lines - lines.length;
    lines.forEach((line, at) => {
      // A malformed line still takes its place: positions are what appends expect.
      this.#sink?.claimRecord(first + at + 1, parse(line));
    });
  }

  #readMessages(): void {
    for (const line of this.#messages?.read() ?? []) {
      const entry = parse(line);
      if (entry) this.#sink?.message(entry);
    }
  }

  #readPresence(name: string): void {
    const match = /^([0-9a-f]{16})\.json$/.exec(name);
    if (!match || this.#closed) return;
    const checkout = match[1] as string;
    let record: PresenceRecord | null = null;
    try {
      record = JSON.parse(readFileSync(join(this.#presenceDir, name), 'utf8')) as PresenceRecord;
    } catch {
      record = null; // removed: its server stopped
    }
    const valid = record !== null && record.v === 1 && record.checkout === checkout && Array.isArray(record.peers) && typeof record.at === 'number';
    this.#sink?.presence(checkout, valid ? record : null, valid ? (record as PresenceRecord).at : 0);
  }
}
