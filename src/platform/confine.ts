/**
 * The one answer to "is this path inside the checkout, and may it be opened as a file". Every
 * reader and writer of the checkout asks here: the layer's files and its manifest, the policy,
 * the harness's `file` and `cwd`, the executor's tools, claim patterns, `init`'s targets.
 *
 * - **Lexically** (`insidePath`): a path is inside when, relative to the root, it is '' or does
 *   not begin with a `..` *segment* (`..foo` is a name, not a step up).
 * - **Through links** (`realInside`): the real path (the nearest existing ancestor's, for a path
 *   that does not exist yet) must be inside the root's real path too.
 * - **Opening** (`readRegular`, `readRegularSync`): only a regular file is ever opened, without
 *   following a link (O_NOFOLLOW) and without blocking (O_NONBLOCK: a FIFO swapped in after the
 *   lstat cannot hang the open, so no thread of libuv's pool waits forever), and never read past
 *   a bound. What the kernel opened is confirmed (/proc/self/fd) against a directory swapped for a
 *   link on the way.
 * - **Directories on the way** (`RealDirectories`): O_NOFOLLOW guards only the last component, so
 *   a reader that never follows links checks every directory between the root and the file (each
 *   looked at once), and a writer refuses a target below a link.
 *
 * Free of heavy imports: the bridge path checks the local half with it.
 */
import { closeSync, constants, lstatSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { openedPath } from './proc.js';

// O_NOFOLLOW closes the race between lstat and open on the last component; O_NONBLOCK keeps a
// FIFO swapped in after lstat from hanging the open.
export const NO_FOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** `path` relative to `root` with `/` separators ('' for the root), or undefined when it is not beneath it. */
export function insidePath(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  if (rel === '') return '';
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return undefined;
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/** How a message names what is at a path that is neither a regular file nor a link. */
export function nonRegularKind(info: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'a device';
}

/** Why a path was refused; the caller words the message its reader understands. */
export type ConfineReason =
  /** An absolute path where a relative one is asked for. */
  | 'absolute'
  /** It leaves the root, as written. */
  | 'outside'
  /** It leaves the root once links are followed. */
  | 'through_link'
  /** A link where none is followed (the file itself or a directory on its way). */
  | 'symlink'
  | 'missing'
  /** A directory, FIFO, socket or device where a regular file is needed (or the reverse). */
  | 'not_regular'
  | 'too_large'
  | 'unreadable';

/** A refusal of the checkout's confinement; `detail` says what was found, in words. */
export class ConfineError extends Error {
  override name = 'ConfineError';
  constructor(
    readonly reason: ConfineReason,
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** A path inside the checkout: absolute, and relative to the root (`/`-separated). */
export interface ConfinedPath {
  absolute: string;
  relative: string;
}

/**
 * `input` (relative to `base`, itself inside `root`; absolute only when `allowAbsolute`) as a path
 * inside the root, lexically. Throws `ConfineError` ('absolute', 'outside').
 */
export function resolveInside(root: string, input: string, options: { base?: string; allowAbsolute?: boolean } = {}): ConfinedPath {
  if (isAbsolute(input) && !options.allowAbsolute) throw new ConfineError('absolute', input, 'must be relative to the checkout\'s root');
  const absolute = resolve(options.base ?? root, input);
  const rel = insidePath(root, absolute);
  if (rel === undefined) throw new ConfineError('outside', input, 'leads outside the checkout');
  return { absolute, relative: rel };
}

/**
 * Where `absolute` really is: links followed, and for a path that does not exist yet its nearest
 * existing ancestor's real path joined with the rest. Throws `ConfineError` ('through_link' when
 * the result leaves `realRoot`, 'symlink' for a dangling link — writing through it would create its
 * target wherever that is).
 */
export async function realInside(realRoot: string, absolute: string, shown = absolute): Promise<ConfinedPath> {
  const rest: string[] = [];
  let current = absolute;
  let real: string;
  for (;;) {
    try {
      real = join(await realpath(current), ...rest.reverse());
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new ConfineError('unreadable', shown, `cannot be resolved (${code ?? String(error)})`);
      if (await lstat(current).then(() => true, () => false)) throw new ConfineError('symlink', shown, 'is a symbolic link whose target does not exist');
      const parent = dirname(current);
      if (parent === current) {
        real = absolute;
        break;
      }
      rest.push(basename(current));
      current = parent;
    }
  }
  const rel = insidePath(realRoot, real);
  if (rel === undefined) throw new ConfineError('through_link', shown, `leads outside the checkout through a symbolic link (to ${real})`);
  return { absolute: real, relative: rel };
}

/**
 * `realInside` for a path that must exist, synchronously (a profile's working directory is judged
 * while listing profiles). Throws `ConfineError` ('missing', 'through_link').
 */
export function realExistingInside(realRoot: string, absolute: string, shown = absolute): ConfinedPath {
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ConfineError('missing', shown, 'does not exist in the checkout');
    throw new ConfineError('unreadable', shown, `cannot be resolved (${code ?? String(error)})`);
  }
  const rel = insidePath(realRoot, real);
  if (rel === undefined) throw new ConfineError('through_link', shown, `leads outside the checkout through a symbolic link (to ${real})`);
  return { absolute: real, relative: rel };
}

/** What reading a regular file found. */
export type ReadVerdict = { ok: true; bytes: Buffer } | { ok: false; reason: 'symlink' | 'missing' | 'not_regular' | 'too_large' | 'unreadable'; detail: string };

function refusedBy(info: { isSymbolicLink(): boolean; isFile(): boolean; isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; size: number }, limit: number, absolute: string): ReadVerdict | undefined {
  if (info.isSymbolicLink()) return { ok: false, reason: 'symlink', detail: `is a symbolic link to ${linkTargetSync(absolute)}; links are never followed` };
  if (!info.isFile()) return { ok: false, reason: 'not_regular', detail: `is ${nonRegularKind(info)}, not a regular file` };
  if (info.size > limit) return { ok: false, reason: 'too_large', detail: `is ${info.size} bytes, over the ${limit}-byte limit` };
  return undefined;
}

function errnoVerdict(error: unknown, what: string): ReadVerdict {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, reason: 'missing', detail: 'does not exist' };
  if (code === 'ELOOP') return { ok: false, reason: 'symlink', detail: 'became a symbolic link while it was read; links are never followed' };
  return { ok: false, reason: 'unreadable', detail: `cannot be ${what} (${code})` };
}

const GREW = (limit: number): ReadVerdict => ({ ok: false, reason: 'too_large', detail: `grew over the ${limit}-byte limit while it was read` });
const MOVED: ReadVerdict = { ok: false, reason: 'symlink', detail: 'opened as another file than its path names: a directory on its path changed (to a symbolic link?) while it was read' };

/** How a read judges the directories above the file. */
export interface ReadOptions {
  /**
   * The caller vouched that every directory above `absolute` is real (`RealDirectories`, or a real
   * path from `realInside`): a file opened under another name means one was swapped for a link
   * since, and is refused. Otherwise (a root reached through a link of the user's) the name is
   * compared with the directory's real path.
   */
  parentsReal?: boolean;
}

/**
 * Reads the regular file at `absolute` whole, never more than `limit` bytes, never following a
 * link at its last component, never blocking on a FIFO.
 */
export async function readRegular(absolute: string, limit: number, options: ReadOptions = {}): Promise<ReadVerdict> {
  let info;
  try {
    info = await lstat(absolute);
  } catch (error) {
    return errnoVerdict(error, 'inspected');
  }
  const refused = refusedBy(info, limit, absolute);
  if (refused) return refused;
  let handle: FileHandle;
  try {
    handle = await open(absolute, NO_FOLLOW_READ);
  } catch (error) {
    return errnoVerdict(error, 'opened');
  }
  try {
    // Swapped for something else between lstat and open: judge what was opened.
    const opened = await handle.stat();
    const changed = refusedBy(opened, limit, absolute);
    if (changed) return changed;
    if (openedPathDiffers(handle.fd, absolute, options)) return MOVED;
    const bytes = await readBounded(handle, opened.size, limit);
    return bytes === undefined ? GREW(limit) : { ok: true, bytes };
  } catch (error) {
    return errnoVerdict(error, 'read');
  } finally {
    await handle.close();
  }
}

/**
 * `readRegular`, synchronously: a build reads thousands of small files, and each asynchronous
 * step is a round trip through libuv's thread pool that costs far more than the read itself
 * (docs/PERFORMANCE.md, "Reload").
 */
export function readRegularSync(absolute: string, limit: number, options: ReadOptions = {}): ReadVerdict {
  let info;
  try {
    info = lstatSync(absolute);
  } catch (error) {
    return errnoVerdict(error, 'inspected');
  }
  const refused = refusedBy(info, limit, absolute);
  if (refused) return refused;
  let fd: number;
  try {
    fd = openSync(absolute, NO_FOLLOW_READ);
  } catch (error) {
    return errnoVerdict(error, 'opened');
  }
  try {
    if (openedPathDiffers(fd, absolute, options)) return MOVED;
    const bytes = readBoundedSync(fd, info.size, limit);
    return bytes === undefined ? GREW(limit) : { ok: true, bytes };
  } catch (error) {
    return errnoVerdict(error, 'read');
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the whole file but never more than `limit` + 1 bytes (undefined when over the limit).
 * `expected` is the size lstat saw; the file may have changed since, so the bound is enforced
 * while reading rather than trusted.
 */
async function readBounded(handle: FileHandle, expected: number, limit: number): Promise<Buffer | undefined> {
  let buffer: Buffer = Buffer.allocUnsafe(Math.min(expected, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      buffer = grow(buffer, length, limit);
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > limit ? undefined : buffer.subarray(0, length);
}

function readBoundedSync(fd: number, expected: number, limit: number): Buffer | undefined {
  let buffer: Buffer = Buffer.allocUnsafe(Math.min(expected, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      buffer = grow(buffer, length, limit);
    }
    const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > limit ? undefined : buffer.subarray(0, length);
}

function grow(buffer: Buffer, length: number, limit: number): Buffer {
  const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit + 1));
  buffer.copy(grown, 0, 0, length);
  return grown;
}

/**
 * Whether the kernel opened another file than `absolute` names (Linux: /proc/self/fd). Where that
 * cannot be asked (no /proc in a minimal container) the component checks stand alone.
 */
function openedPathDiffers(fd: number, absolute: string, options: ReadOptions): boolean {
  const opened = openedPath(fd);
  if (opened === null || opened === absolute) return false;
  if (options.parentsReal) return true;
  try {
    return opened !== join(realpathSync(dirname(absolute)), basename(absolute));
  } catch {
    return true;
  }
}

function linkTargetSync(absolute: string): string {
  try {
    return readlinkSync(absolute);
  } catch {
    return '?';
  }
}

/** What stands on the way to a path; `component` is the first directory that is not real. */
export type DirectoryVerdict =
  | { kind: 'real' }
  /** Absent, or cannot be inspected (`code`): whoever opens the path below reports it. */
  | { kind: 'unknown'; component: string; code: string }
  | { kind: 'symlink'; component: string; target: string }
  | { kind: 'not_directory'; component: string; what: string };

const REAL: DirectoryVerdict = { kind: 'real' };

/**
 * Whether every directory between a root and a path is a real directory, each looked at once
 * (lstat) and its verdict remembered, so thousands of files in a few directories cost a few calls.
 */
export class RealDirectories {
  readonly #root: string;
  readonly #verdicts = new Map<string, Promise<DirectoryVerdict>>();

  /** `root` is trusted as it is (a real path when links in its own ancestry must not matter). */
  constructor(root: string) {
    this.#root = root;
  }

  /**
   * The verdict on `directory` itself and every directory above it up to the root. Paths are
   * relative to the root, `/`-separated and normalised; `''` is the root.
   */
  check(directory: string): Promise<DirectoryVerdict> {
    if (directory === '' || directory === '.') return Promise.resolve(REAL);
    let verdict = this.#verdicts.get(directory);
    if (verdict === undefined) {
      verdict = this.#judge(directory);
      this.#verdicts.set(directory, verdict);
    }
    return verdict;
  }

  /** The verdict on the directories that hold `path` (not on `path` itself). */
  parentsOf(path: string): Promise<DirectoryVerdict> {
    const slash = path.lastIndexOf('/');
    return this.check(slash < 0 ? '' : path.slice(0, slash));
  }

  async #judge(directory: string): Promise<DirectoryVerdict> {
    const above = await this.parentsOf(directory);
    if (above.kind !== 'real') return above;
    const absolute = join(this.#root, directory);
    let info;
    try {
      info = await lstat(absolute);
    } catch (error) {
      return { kind: 'unknown', component: directory, code: (error as NodeJS.ErrnoException).code ?? String(error) };
    }
    if (info.isSymbolicLink()) {
      return { kind: 'symlink', component: directory, target: await readlink(absolute).catch(() => '?') };
    }
    if (!info.isDirectory()) return { kind: 'not_directory', component: directory, what: info.isFile() ? 'a regular file' : nonRegularKind(info) };
    return REAL;
  }
}

/**
 * Refuses a file to be written at `relative` (inside `root`, lexically checked first) when the
 * file, or any directory on its way that exists, is a symbolic link or not what it must be: a
 * write through a link would land wherever the link points. Absent directories are fine (the
 * writer creates them). Throws `ConfineError`.
 */
export async function assertWritableInside(root: string, relativePath: string): Promise<ConfinedPath> {
  const confined = resolveInside(root, relativePath);
  const directories = new RealDirectories(root);
  const above = await directories.parentsOf(confined.relative);
  if (above.kind === 'symlink') throw new ConfineError('symlink', relativePath, `${above.component} is a symbolic link to ${above.target}; nothing is written through a link`);
  if (above.kind === 'not_directory') throw new ConfineError('not_regular', relativePath, `${above.component} is ${above.what}, not a directory`);
  const info = await lstat(confined.absolute).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new ConfineError('symlink', relativePath, `is a symbolic link to ${await readlink(confined.absolute).catch(() => '?')}; nothing is written through a link`);
  if (info !== undefined && !info.isFile()) throw new ConfineError('not_regular', relativePath, `is ${nonRegularKind(info)}, not a regular file`);
  return confined;
}
