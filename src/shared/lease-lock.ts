/**
 * Every change to the lease (create, publish, take over, remove) happens under one lock file
 * beside it, `server.json.lock`, taken by exclusive create. A compare-and-swap is then a read and
 * an atomic rename under the lock: no writer ever overwrites what another just wrote, and no
 * reader ever sees the lease briefly absent while it is replaced (which would send a starting
 * client off to create a second lease). Readers take no lock. A lock whose holder died, or that
 * was held far longer than any change takes, is broken.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { link, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';

/** How long a change waits for the lock before it gives up. */
export const LOCK_WAIT_MS = 5_000;
/** A lock older than this is broken: a change holds it for milliseconds. */
const STALE_LOCK_MS = 10_000;
const POLL_MS = 5;

/** The lock cannot be taken (held too long by a live process, or not writable). */
export class LeaseLockUnavailable extends Error {
  override name = 'LeaseLockUnavailable';
}

/**
 * A name no other writer uses at the same moment: the pid, a high-resolution time and a random
 * part. It names lock owners and temporary files; it guards against collisions, not attackers
 * (node:crypto would cost a bridge's start more than the lease it reads).
 */
export function uniqueSuffix(): string {
  return `${process.pid}-${process.hrtime.bigint().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function lockPathOf(leasePath: string): string {
  return `${leasePath}.lock`;
}

function processIsGone(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Breaks the lock if it is the stale one we read (`seen`); a fresh lock in its place is put back. */
async function breakIfStale(lockPath: string, seen: string): Promise<void> {
  const aside = `${lockPath}.${uniqueSuffix()}.stale`;
  try {
    await rename(lockPath, aside);
  } catch {
    return; // released meanwhile
  }
  const moved = await readFile(aside, 'utf8').catch(() => null);
  if (moved !== seen) await link(aside, lockPath).catch(() => undefined);
  await rm(aside, { force: true }).catch(() => undefined);
}

async function isStale(lockPath: string, content: string): Promise<boolean> {
  const pid = Number(content.split(' ')[0]);
  if (processIsGone(pid)) return true;
  const age = await stat(lockPath).then(
    (info) => Date.now() - info.mtimeMs,
    () => 0,
  );
  return age > STALE_LOCK_MS;
}

/** Runs `change` holding the lease's lock. */
export async function withLeaseLock<T>(leasePath: string, change: () => Promise<T>): Promise<T> {
  const lockPath = lockPathOf(leasePath);
  const mine = `${process.pid} ${uniqueSuffix()}\n`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFile(lockPath, mine, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await readFile(lockPath, 'utf8').catch(() => null);
    if (held !== null && (await isStale(lockPath, held))) {
      await breakIfStale(lockPath, held);
      continue;
    }
    if (Date.now() > deadline) {
      throw new LeaseLockUnavailable(`the lease lock ${lockPath} is held by process ${held?.split(' ')[0] ?? '?'} for over ${LOCK_WAIT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await change();
  } finally {
    // Ours only: a lock broken as stale and taken by another is not ours to remove.
    if ((await readFile(lockPath, 'utf8').catch(() => null)) === mine) await rm(lockPath, { force: true }).catch(() => undefined);
  }
}

/**
 * The lock around a change that is synchronous and short (an append to a ledger): taken, used
 * and let go in one turn of the event loop without the thread pool, which a busy machine makes
 * slow; only a contended lock waits, as `withLeaseLock` does.
 */
export async function withLeaseLockBrief<T>(path: string, change: () => T): Promise<T> {
  const lockPath = lockPathOf(path);
  const mine = `${process.pid} ${uniqueSuffix()}\n`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      try {
        writeSync(fd, mine);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await readFile(lockPath, 'utf8').catch(() => null);
    if (held !== null && (await isStale(lockPath, held))) {
      await breakIfStale(lockPath, held);
      continue;
    }
    if (Date.now() > deadline) throw new LeaseLockUnavailable(`the lock ${lockPath} is held by process ${held?.split(' ')[0] ?? '?'} for over ${LOCK_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return change();
  } finally {
    try {
      if (readFileSync(lockPath, 'utf8') === mine) unlinkSync(lockPath);
    } catch {
      // already gone
    }
  }
}

/**
 * The synchronous form, for the way out of a signal: takes the lock if it is free at once and
 * runs `change` either way (a process about to die cannot wait; its change only removes its own
 * lease).
 */
export function withLeaseLockSync<T>(leasePath: string, change: () => T): T {
  const lockPath = lockPathOf(leasePath);
  const mine = `${process.pid} ${uniqueSuffix()}\n`;
  let taken = false;
  try {
    const fd = openSync(lockPath, 'wx', 0o600);
    writeSync(fd, mine);
    closeSync(fd);
    taken = true;
  } catch {
    // Held, or the directory is gone: go on without it.
  }
  try {
    return change();
  } finally {
    if (taken) {
      try {
        if (readFileSync(lockPath, 'utf8') === mine) unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  }
}
