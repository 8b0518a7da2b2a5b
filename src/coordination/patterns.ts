/**
 * Claim patterns: paths or globs relative to the checkout, '/'-separated. A plain path covers
 * itself and everything beneath it (a directory claim); a glob is matched by picomatch with dot
 * files included. Pure functions, shared by the claim board and the git guard.
 */
import { isAbsolute } from 'node:path';
import { insidePath } from '../platform/confine.js';
import picomatch from 'picomatch';
import { CapabilityError } from '../platform/errors.js';

const matchers = new Map<string, (path: string) => boolean>();
const scans = new Map<string, { isGlob: boolean; base: string; parts: string[] }>();
const MAX_CACHED = 10_000;

/** What picomatch reads in a pattern, kept: scanning costs microseconds, claims compare often. */
function scanOf(pattern: string): { isGlob: boolean; base: string; parts: string[] } {
  let scan = scans.get(pattern);
  if (!scan) {
    if (scans.size >= MAX_CACHED) scans.clear();
    const scanned = picomatch.scan(pattern, { parts: true });
    scan = { isGlob: scanned.isGlob, base: scanned.isGlob ? scanned.base : pattern, parts: scanned.parts ?? pattern.split('/') };
    scans.set(pattern, scan);
  }
  return scan;
}

export function isGlob(pattern: string): boolean {
  return scanOf(pattern).isGlob;
}

/** The literal directories before a glob's first wildcard; a plain path is its own base. */
export function staticBase(pattern: string): string {
  return scanOf(pattern).base;
}

/**
 * The checkout-relative form of what a client wrote: `./` and trailing `/` dropped, `//`
 * collapsed, an absolute path inside `root` made relative. Anything that leaves the checkout is
 * refused; the whole checkout is the empty pattern.
 */
export function normalisePattern(root: string, input: string): string {
  if (isNormal(input)) return input;
  let path = input.trim().replaceAll('\\', '/');
  if (isAbsolute(path)) {
    const inside = insidePath(root, path);
    if (inside === undefined) throw outside(input);
    path = inside;
  }
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw outside(input);
  // picomatch reads a leading `!` as "everything but": a claim on all the rest is not a claim.
  if (segments[0]?.startsWith('!')) {
    throw new CapabilityError('refused', `${JSON.stringify(input)} is negated (a leading "!"): claim the paths themselves`);
  }
  return segments.join('/');
}

/**
 * Whether a pattern is already in its normal form (relative, `/`-separated, no empty, `.` or `..`
 * segment, no surrounding space, not negated): most are, and a check normalises every path it is
 * asked about.
 */
function isNormal(input: string): boolean {
  const last = input.length - 1;
  if (last < 0 || input.charCodeAt(0) === 33 /* ! */ || input.trim() !== input) return false;
  let segmentStart = 0;
  for (let i = 0; i <= last + 1; i += 1) {
    const code = i > last ? 47 /* / */ : input.charCodeAt(i);
    if (code === 92 /* \ */) return false;
    if (code !== 47) continue;
    const length = i - segmentStart;
    // An empty segment (a leading, doubled or trailing `/`), `.` or `..`.
    if (length === 0 || (input.charCodeAt(segmentStart) === 46 /* . */ && (length === 1 || (length === 2 && input.charCodeAt(segmentStart + 1) === 46)))) return false;
    segmentStart = i + 1;
  }
  return true;
}

function outside(input: string): CapabilityError {
  return new CapabilityError('refused', `${JSON.stringify(input)} is outside the checkout: claim paths relative to its root (or absolute paths inside it)`);
}

function matcherOf(glob: string): (path: string) => boolean {
  let match = matchers.get(glob);
  if (!match) {
    if (matchers.size >= MAX_CACHED) matchers.clear();
    // The compiled expression itself: picomatch's matcher function builds a result per call.
    const expression = picomatch.makeRe(glob, { dot: true });
    match = (path) => expression.test(path);
    matchers.set(glob, match);
  }
  return match;
}

/** `a` is `b` or lies beneath it (on a `/` boundary); the empty path holds everything. */
function within(a: string, b: string): boolean {
  return b === '' || a === b || a.startsWith(`${b}/`);
}

/** Whether a claim pattern covers a concrete checkout-relative path. */
export function patternCovers(pattern: string, path: string): boolean {
  return coverTest(pattern)(path);
}

/** `patternCovers` with the pattern compiled once, for a claim that is tested many times. */
export function coverTest(pattern: string): (path: string) => boolean {
  if (!isGlob(pattern)) return (path) => within(path, pattern);
  const match = matcherOf(pattern);
  return (path) => {
    if (match(path)) return true;
    // A glob naming directories (`src/*`) covers what lies beneath what it matches.
    for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) {
      if (match(path.slice(0, end))) return true;
    }
    return false;
  };
}

/**
 * Whether `glob` may match `literal` or something beneath it, segment by segment: a `**`, or a
 * brace holding a `/`, may reach anywhere below; a glob longer than the literal reaches beneath it.
 */
function globReaches(glob: string, literal: string): boolean {
  const { parts } = scanOf(glob);
  const names = literal === '' ? [] : literal.split('/');
  for (const [index, name] of names.entries()) {
    const part = parts[index];
    if (part === undefined) return false;
    if (part.includes('**') || part.includes('/')) return true;
    if (!matcherOf(part)(name)) return false;
  }
  return parts.length > names.length;
}

/** The literal end of a glob's last segment (`*.ts` → `.ts`), or null when it ends in a wildcard. */
function literalSuffix(glob: string): string | null {
  const last = glob.slice(glob.lastIndexOf('/') + 1);
  const match = /[^*?\]}\)]+$/.exec(last);
  return match && /[*?[{(]/.test(last) ? match[0] : null;
}

/**
 * Whether two patterns may name a common path. Exact for a path against a path or a glob; for two
 * globs it is conservative: they overlap when their static bases are nested, unless both end in
 * literal suffixes that cannot name the same file (`*.ts` and `*.md`).
 */
export function patternsOverlap(a: string, b: string): boolean {
  const aGlob = isGlob(a);
  const bGlob = isGlob(b);
  if (!aGlob && !bGlob) return within(a, b) || within(b, a);
  if (!aGlob) return patternCovers(b, a) || globReaches(b, a);
  if (!bGlob) return patternCovers(a, b) || globReaches(a, b);
  const aBase = staticBase(a);
  const bBase = staticBase(b);
  if (!within(aBase, bBase) && !within(bBase, aBase)) return false;
  const aSuffix = literalSuffix(a);
  const bSuffix = literalSuffix(b);
  if (aSuffix !== null && bSuffix !== null && !aSuffix.endsWith(bSuffix) && !bSuffix.endsWith(aSuffix)) return false;
  return true;
}
