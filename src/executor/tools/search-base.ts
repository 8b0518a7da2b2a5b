/** The directory or file glob and grep start from: `path` (default: the working directory), checked like any path. */
import { stat } from 'node:fs/promises';
import type { Floor } from '../../floor/rules.js';
import { resolveToolPath } from '../paths.js';
import type { ResolvedPath } from '../paths.js';
import type { ToolContext, ToolOutcome } from '../tool.js';
import { failure } from './common.js';

export type SearchBase = { ok: true; base: ResolvedPath; directory: boolean } | { ok: false; outcome: ToolOutcome };

export async function resolveSearchBase(path: string | undefined, context: ToolContext, floor: Floor): Promise<SearchBase> {
  const checked = await resolveToolPath(path ?? '.', context, floor, 'read');
  if (!checked.ok) return checked;
  try {
    const info = await stat(checked.path.real);
    return { ok: true, base: checked.path, directory: info.isDirectory() };
  } catch {
    return { ok: false, outcome: failure(`${path ?? '.'} does not exist`) };
  }
}

/** The line that tells the model files were left out, so an absent file does not puzzle it. */
export function protectedNote(count: number, verb: string): string {
  if (count === 0) return '';
  return `\n(${count} protected ${count === 1 ? 'file was' : 'files were'} ${verb}: permission floor)`;
}
