/**
 * The server lock: held by the process that serves a checkout for as long as it lives, and let go
 * by the kernel when it dies (`kill -9` included). The lease says where the server is; the lock
 * says whether one is alive — which the lease cannot say once it is deleted or overwritten. A
 * process that finds the lease damaged but the lock held knows a live server will publish its
 * lease again, and waits for it instead of becoming a second server (docs/MCP.md, "The lease").
 *
 * - Linux: an abstract unix socket named after the lease's path. Binding it is atomic, it leaves
 *   no file, and nothing outlives its holder (libuv opens it close-on-exec: agents the server
 *   spawned do not inherit it).
 * - Windows: a named pipe, which behaves the same.
 * - Elsewhere: a socket file in the user's temporary directory. A file whose holder died refuses
 *   connections and is replaced, under a lock file, so two contenders never both replace it.
 *
 * Any local user can connect to an abstract socket, so the lock says nothing: a connection is
 * closed at once, unread. The token stays in the 0600 lease.
 */
import { createHash } from 'node:crypto';
import { connect, createServer, Server } from 'node:net';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLeaseLock } from './lease-lock.js';

/** How the lock is held: by a name the kernel frees, or by a socket file and a connect probe. */
export type LockFlavour = 'abstract' | 'pipe' | 'file';

/** A connect probe of a socket file that takes longer than this finds its holder alive. */
const PROBE_MS = 1_000;

export interface ServerLock {
  /** Where it is held, as the log names it. */
  readonly address: string;
  /** Lets go of it; safe to call twice (the process's death does the same). */
  release(): void;
}

export type LockAttempt =
  | { kind: 'taken'; lock: ServerLock }
  /** A live process holds it: a server of this checkout is alive. `address` as the log names it. */
  | { kind: 'held'; address: string }
  /** It cannot be used here (an unwritable temporary directory…): go on as if it were free. */
  | { kind: 'unavailable'; why: string };

export function defaultFlavour(platform: NodeJS.Platform = process.platform): LockFlavour {
  if (platform === 'linux' || platform === 'android') return 'abstract';
  return platform === 'win32' ? 'pipe' : 'file';
}

/** The lock's address for the lease at `leasePath` (a real path: one checkout, one name). */
export function lockAddress(leasePath: string, flavour: LockFlavour, dir = tmpdir()): string {
  // Hashed: a socket's name is bounded (108 bytes, 104 on macOS, where the temporary directory
  // alone takes about 50), a checkout's path is not. 96 bits tell one machine's checkouts apart.
  const name = `majordomus-server-${createHash('sha256').update(leasePath).digest('hex').slice(0, 24)}`;
  if (flavour === 'abstract') return `\0${name}`;
  if (flavour === 'pipe') return `\\\\?\\pipe\\${name}`;
  return join(dir, `${name}.sock`);
}

/** Takes the server lock of the lease at `leasePath` if no live process holds it. */
export async function takeServerLock(leasePath: string, flavour = defaultFlavour(), dir?: string): Promise<LockAttempt> {
  const address = lockAddress(leasePath, flavour, dir);
  if (flavour !== 'file') return attempt(address, await listenOn(address));
  try {
    // Probe, replace a stale file and bind as one step: two contenders that both found it stale
    // must not both replace it (the second would unlink the first one's fresh socket).
    return await withLeaseLock(address, async () => {
      const first = await listenOn(address);
      if (!isInUse(first)) return attempt(address, first);
      if (await answers(address)) return { kind: 'held', address: printable(address) };
      await unlink(address).catch(() => undefined); // its holder died
      return attempt(address, await listenOn(address));
    });
  } catch (error) {
    return { kind: 'unavailable', why: error instanceof Error ? error.message : String(error) };
  }
}

function isInUse(outcome: Server | NodeJS.ErrnoException): boolean {
  return !(outcome instanceof Server) && outcome.code === 'EADDRINUSE';
}

function attempt(address: string, outcome: Server | NodeJS.ErrnoException): LockAttempt {
  if (outcome instanceof Server) return { kind: 'taken', lock: heldBy(address, outcome) };
  if (outcome.code === 'EADDRINUSE') return { kind: 'held', address: printable(address) };
  return { kind: 'unavailable', why: `cannot bind ${printable(address)} (${outcome.code ?? outcome.message})` };
}

function heldBy(address: string, server: Server): ServerLock {
  let held = true;
  return {
    address: printable(address),
    release(): void {
      if (!held) return;
      held = false;
      server.close();
    },
  };
}

/** Binds `address`; answers the listening server or why it could not. */
function listenOn(address: string): Promise<Server | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    // A connection carries nothing either way: closed unread.
    const server = createServer((socket) => socket.destroy());
    server.once('error', resolve);
    server.listen(address, () => {
      server.off('error', resolve);
      server.on('error', () => undefined);
      server.unref(); // the lock never keeps the process alive
      resolve(server);
    });
  });
}

/** Whether a process accepts connections on the socket file at `path` (a stale file refuses them). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (alive: boolean): void => {
      socket.destroy();
      resolve(alive);
    };
    socket.setTimeout(PROBE_MS, () => done(true));
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'EAGAIN'));
  });
}

/** An abstract name as people write it (`@name`). */
function printable(address: string): string {
  return address.startsWith('\0') ? `@${address.slice(1)}` : address;
}
