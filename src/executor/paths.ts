/**
 * Where a path the model names really is, and whether a tool may touch it. A path resolves
 * against the session's cwd and must stay under the root both as written and after symlinks are
 * followed; for a path that does not exist yet, its nearest existing parent is what is followed.
 * The floor is asked about both forms, so a link named `notes.txt` that points at `.env` is
 * refused like `.env` itself. Writing into `.git/` is refused: repository internals may be read,
 * never written.
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Floor } from './floor.js';
import { floorReason } from './floor.js';
import type { ToolContext, ToolOutcome } from './tool.js';
import { toPosix } from './walk.js';

export interface ResolvedPath {
  /** The path with symlinks followed (for a new file: its parent's realpath joined with the rest). */
  real: string;
  /** `real` relative to the root, POSIX separators ('' for the root itself). */
  relative: string;
  /** `real` relative to the cwd, as the model should see it in answers. */
  shown: string;
}

export type PathCheck = { ok: true; path: ResolvedPath } | { ok: false; outcome: ToolOutcome };

/** A refusal: `refused` is set so the transcript shows the rule, and the model reads the same text. */
export function refusal(reason: string): ToolOutcome {
  return { ok: false, output: `refused: ${reason}`, refused: reason };
}

/** `path` relative to `root` in POSIX form, or undefined when it is not beneath it. */
export function inside(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith('../') || isAbsolute(rel)) return undefined;
  return toPosix(rel);
}

async function followSymlinks(path: string): Promise<{ real: string } | { dangling: string }> {
  const rest: string[] = [];
  let current = path;
  for (;;) {
    try {
      return { real: join(await realpath(current), ...rest.reverse()) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // A link whose target is missing: writing through it would create the target, wherever it is.
      if (await lstat(current).then(() => true, () => false)) return { dangling: current };
      const parent = dirname(current);
      if (parent === current) return { real: path };
      rest.push(basename(current));
      current = parent;
    }
  }
}

/** Resolves `input` for a tool; refuses a path outside the root, a protected one, or a write into `.git/`. */
export async function resolveToolPath(input: string, context: ToolContext, floor: Floor, access: 'read' | 'write'): Promise<PathCheck> {
  const absolute = resolve(context.cwd, input);
  const lexical = inside(context.root, absolute);
  if (lexical === undefined) return { ok: false, outcome: refusal(`${input} is outside the checkout (${context.root})`) };
  const lexicalMatch = floor.match(lexical);
  if (lexicalMatch) return { ok: false, outcome: refusal(`${input} is ${floorReason(lexicalMatch)}`) };
  let followed: Awaited<ReturnType<typeof followSymlinks>>;
  try {
    followed = await followSymlinks(absolute);
  } catch (error) {
    return { ok: false, outcome: { ok: false, output: `cannot resolve ${input}: ${(error as Error).message}` } };
  }
  if ('dangling' in followed) return { ok: false, outcome: refusal(`${input} is a symlink whose target does not exist`) };
  const real = followed.real;
  const realRelative = inside(context.root, real);
  if (realRelative === undefined) return { ok: false, outcome: refusal(`${input} leads outside the checkout through a symlink (to ${real})`) };
  const realMatch = floor.match(realRelative);
  if (realMatch) return { ok: false, outcome: refusal(`${input} leads to ${realRelative}, ${floorReason(realMatch)}`) };
  if (access === 'write' && (realRelative.split('/').includes('.git') || lexical.split('/').includes('.git'))) {
    return { ok: false, outcome: refusal(`${input} is inside .git/: repository internals may be read but never written`) };
  }
  return { ok: true, path: { real, relative: realRelative, shown: toPosix(relative(context.cwd, real)) || '.' } };
}
