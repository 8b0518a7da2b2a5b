/**
 * Claim patterns: what a peer claims, and whether a path or another claim falls under it. Pure
 * and synchronous (no file system), so the server's claim table and the git guard's hook judge a
 * path the same way.
 *
 * A pattern is relative to the checkout's root with `/` separators. A pattern without glob
 * characters names a file or a directory and covers everything beneath it (`src/a` ≡ `src/a/**`);
 * a glob is matched by picomatch with `dot: true` (a claim on `**` includes `.github/`). Every
 * pattern also covers its own text taken literally, so a file named `src/[id].tsx` is covered by
 * a claim on exactly that name although picomatch reads `[id]` as a character class.
 *
 * Overlap is conservative: two claims overlap when some path could fall under both, and when in
 * doubt (braces spanning `/`, `**` in the middle) they are said to overlap — a warning too many
 * costs a glance, one too few costs a conflict.
 */
import picomatch from 'picomatch';
import { CapabilityError } from '../errors.js';

const MATCH_OPTIONS = { dot: true } as const;

/** Compiled matchers and scans by pattern; cleared whole when it grows past this many. */
const CACHE_LIMIT = 10_000;
const matchers = new Map<string, (path: string) => boolean>();
const scans = new Map<string, Scan>();

interface Scan {
  isGlob: boolean;
  /** The literal directories before the first glob character ('' when it starts with one). */
  base: string;
  /** Segments as picomatch splits them (a brace may hold a `/`). */
  parts: string[];
}

function remember<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    value = make();
    cache.set(key, value);
  }
  return value;
}

function matcherOf(pattern: string): (path: string) => boolean {
  return remember(matchers, pattern, () => picomatch(pattern, MATCH_OPTIONS));
}

function scanOf(pattern: string): Scan {
  return remember(scans, pattern, () => {
    const scanned = picomatch.scan(pattern, { parts: true });
    return { isGlob: scanned.isGlob, base: scanned.base, parts: scanned.parts ?? pattern.split('/') };
  });
}

/** Whether `pattern` holds glob characters (picomatch's reading). */
export function isGlobPattern(pattern: string): boolean {
  return scanOf(pattern).isGlob;
}

/** `a` is `b` or lies beneath it, on `/` boundaries; '' is the root, above everything. */
function within(a: string, b: string): boolean {
  return b === '' || a === b || a.startsWith(`${b}/`);
}

function outside(input: string, why: string): CapabilityError {
  return new CapabilityError('refused', `${JSON.stringify(input)} ${why}: a claim names paths inside the checkout, relative to its root`);
}

/**
 * The canonical form of a claimed path or glob: relative to `root` (an absolute path inside it is
 * made relative), no `./` or empty segments, no trailing `/`; the root itself is `**`. Refused
 * (`refused`) when it lies outside the checkout, has a `..` segment, or is negated (`!…`).
 */
export function normalisePattern(root: string, input: string): string {
  const rootPath = root.length > 1 ? root.replace(/\/+$/, '') : root;
  let path = input;
  if (path.startsWith('/')) {
    if (path !== rootPath && !path.startsWith(rootPath === '/' ? '/' : `${rootPath}/`)) throw outside(input, 'is outside the checkout');
    path = path.slice(rootPath.length);
  }
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw outside(input, 'has a ".." segment');
  const normalised = segments.join('/');
  if (normalised.startsWith('!')) throw outside(input, 'is negated (a leading "!")');
  return normalised === '' ? '**' : normalised;
}

/** Whether the concrete relative `path` (a file git reports) falls under the claim `pattern`. */
export function patternCovers(pattern: string, path: string): boolean {
  if (within(path, pattern)) return true;
  return scanOf(pattern).isGlob && matcherOf(pattern)(path);
}

/**
 * Whether glob `glob` could match `literal` or something beneath it: its segments are matched
 * against the literal's one by one; `**` or a segment holding `/` (a brace) answers yes.
 */
function globReaches(glob: string, literal: string): boolean {
  if (matcherOf(glob)(literal)) return true;
  const { parts } = scanOf(glob);
  const names = literal.split('/');
  for (const [index, name] of names.entries()) {
    const part = parts[index];
    if (part === undefined) return false; // the glob ends above the literal
    if (part.includes('**') || part.includes('/')) return true;
    if (!matcherOf(part)(name)) return false;
  }
  return parts.length > names.length;
}

/** The literal extension a final segment ends with (`*.ts` → `ts`), or null. */
function finalExtension(pattern: string): string | null {
  const last = pattern.slice(pattern.lastIndexOf('/') + 1);
  const match = /\.([A-Za-z0-9_-]+)$/.exec(last);
  return match ? (match[1] as string) : null;
}

/** Whether two normalised claim patterns could cover a common path (conservative, symmetric). */
export function patternsOverlap(a: string, b: string): boolean {
  if (within(a, b) || within(b, a)) return true;
  const globA = scanOf(a).isGlob;
  const globB = scanOf(b).isGlob;
  if (!globA && !globB) return false;
  if (!globA) return globReaches(b, a);
  if (!globB) return globReaches(a, b);
  const baseA = scanOf(a).base;
  const baseB = scanOf(b).base;
  if (!within(baseA, baseB) && !within(baseB, baseA)) return false;
  const extensionA = finalExtension(a);
  const extensionB = finalExtension(b);
  return extensionA === null || extensionB === null || extensionA === extensionB;
}
