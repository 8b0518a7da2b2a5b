/**
 * The pieces every read of a layer file (and of the manifest) is made of: open without following
 * a link and without blocking on a FIFO, read never past a bound, and ask the kernel which file
 * was really opened. The callers lstat first and turn each refusal into their own message.
 */
import { constants, readlinkSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

// O_NOFOLLOW closes the race between lstat and open on the last component; O_NONBLOCK keeps a
// FIFO swapped in after lstat from hanging the open.
export const NO_FOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** How a message names what is at a path that is neither a regular file nor a link. */
export function nonRegularKind(info: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * Reads the whole file but never more than `limit` + 1 bytes (undefined when over the limit).
 * `expected` is the size lstat saw; the file may have changed since, so the bound is enforced
 * while reading rather than trusted from a second stat.
 */
export async function readBounded(handle: FileHandle, expected: number, limit: number): Promise<Buffer | undefined> {
  let buffer = Buffer.allocUnsafe(Math.min(expected, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > limit ? undefined : buffer.subarray(0, length);
}

/**
 * `readBounded` for a descriptor, synchronously: a build reads thousands of small files, and
 * each asynchronous step is a round trip through libuv's thread pool that costs far more than the
 * read itself (docs/PERFORMANCE.md, "Reload"). The build worker uses it; so do the start-up build and a
 * takeover's, on the main thread before it serves (the build yields every few dozen files).
 */
export function readBoundedSync(fd: number, expected: number, limit: number): Buffer | undefined {
  let buffer = Buffer.allocUnsafe(Math.min(expected, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > limit ? undefined : buffer.subarray(0, length);
}

/**
 * The real path of the file behind `fd`, as the kernel knows it (Linux: /proc/self/fd), or
 * undefined where that cannot be asked. O_NOFOLLOW guards only the last component; this closes
 * the race on the directories above it (one replaced by a link between the check and the open).
 */
export function openedPathSync(fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined; // No /proc (a minimal container): the component check stands alone.
  }
}
