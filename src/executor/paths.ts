/**
 * Where a path the model names really is, and whether a tool may touch it. The checkout's
 * confinement (src/platform/confine.ts) resolves it against the session's cwd, as written and
 * through links; the floor (src/floor/rules.ts) is asked about both forms, so a link named
 * `notes.txt` that points at `.env` is refused like `.env` itself. Writing into `.git/` is
 * refused: repository internals may be read, never written.
 */
import { relative } from 'node:path';
import { ConfineError, realInside, resolveInside } from '../platform/confine.js';
import { toPosix } from '../platform/walk.js';
import type { Floor } from '../floor/rules.js';
import { floorReason } from '../floor/rules.js';
import type { ToolContext, ToolOutcome } from './tool.js';

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

/** Resolves `input` for a tool; refuses a path outside the root, a protected one, or a write into `.git/`. */
export async function resolveToolPath(input: string, context: ToolContext, floor: Floor, access: 'read' | 'write'): Promise<PathCheck> {
  let lexical: string;
  let real: { absolute: string; relative: string };
  try {
    const written = resolveInside(context.root, input, { base: context.cwd, allowAbsolute: true });
    lexical = written.relative;
    const lexicalMatch = floor.match(lexical);
    if (lexicalMatch) return { ok: false, outcome: refusal(`${input} is ${floorReason(lexicalMatch)}`) };
    real = await realInside(context.root, written.absolute, input);
  } catch (error) {
    if (!(error instanceof ConfineError)) throw error;
    if (error.reason === 'unreadable') return { ok: false, outcome: { ok: false, output: `cannot resolve ${input}: ${error.detail}` } };
    const detail = error.reason === 'outside' ? `is outside the checkout (${context.root})` : error.detail;
    return { ok: false, outcome: refusal(`${input} ${detail}`) };
  }
  const realMatch = floor.match(real.relative);
  if (realMatch) return { ok: false, outcome: refusal(`${input} leads to ${real.relative}, ${floorReason(realMatch)}`) };
  if (access === 'write' && (real.relative.split('/').includes('.git') || lexical.split('/').includes('.git'))) {
    return { ok: false, outcome: refusal(`${input} is inside .git/: repository internals may be read but never written`) };
  }
  return { ok: true, path: { real: real.absolute, relative: real.relative, shown: toPosix(relative(context.cwd, real.absolute)) || '.' } };
}
