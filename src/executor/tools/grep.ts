/**
 * grep: lines matching a regular expression, as `file:line:text`. Protected files are never
 * opened (the floor is asked before any read, for a symlink about its target too).
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, relative } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import type { Floor } from '../../floor/rules.js';
import { insidePath, readRegular } from '../../platform/confine.js';
import type { ToolContext } from '../tool.js';
import { toPosix, walkFiles } from '../../platform/walk.js';
import { cutLine, defineTool, failure } from './common.js';
import { protectedNote, resolveSearchBase } from './search-base.js';

export const GREP_DEFAULT_MAX = 200;
export const GREP_MAX = 2000;
const LINE_CAP = 300;
/** Files larger than this are passed over (logs, bundles): bash can search them if really needed. */
export const GREP_FILE_MAX_BYTES = 5 * 1024 * 1024;

const schema = z.object({
  pattern: z.string().min(1).describe('Regular expression (JavaScript syntax), matched against each line.'),
  path: z.string().min(1).optional().describe('File or directory to search (default: the working directory).'),
  glob: z.string().min(1).optional().describe('Only files matching this glob: without "/" it matches the file name, with "/" the path relative to path.'),
  max_count: z.number().int().min(1).max(GREP_MAX).optional().describe(`Most matching lines to answer (default ${GREP_DEFAULT_MAX}).`),
});

interface Candidate {
  path: string;
  /** Relative to the root. */
  relative: string;
  symlink: boolean;
}

/** The file grep may open for a candidate, or why not: a symlink is judged by where it leads. */
async function openable(candidate: Candidate, context: ToolContext, floor: Floor): Promise<string | 'protected' | undefined> {
  if (floor.match(candidate.relative)) return 'protected';
  if (!candidate.symlink) return candidate.path;
  try {
    const real = await realpath(candidate.path);
    const rel = insidePath(context.root, real);
    if (rel === undefined) return undefined;
    if (floor.match(rel)) return 'protected';
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** A regular file's text (never a FIFO or a device: confine refuses them without blocking), or undefined for a binary or oversized one. */
async function readText(path: string): Promise<string | undefined> {
  const read = await readRegular(path, GREP_FILE_MAX_BYTES);
  if (!read.ok) return undefined;
  return read.bytes.subarray(0, 8192).includes(0) ? undefined : read.bytes.toString('utf8');
}

export const grepTool = defineTool({
  name: 'grep',
  description: `Search file contents with a regular expression; answers "file:line:text" lines, at most max_count (default ${GREP_DEFAULT_MAX}). Binary files, files over 5 MB, .git and node_modules are not searched unless path names them.`,
  schema,
  async run(input, context, { floor }) {
    let regex: RegExp;
    try {
      regex = new RegExp(input.pattern);
    } catch (error) {
      return failure(`invalid regular expression: ${(error as Error).message}`);
    }
    const start = await resolveSearchBase(input.path, context, floor);
    if (!start.ok) return start.outcome;
    const base = start.base.real;
    const filter = input.glob === undefined ? undefined : picomatch(input.glob, { dot: true });
    const filterOnName = input.glob !== undefined && !input.glob.includes('/');
    const candidates: AsyncIterable<Candidate> | Candidate[] = start.directory
      ? (async function* () {
          for await (const entry of walkFiles(context.root, base, { signal: context.signal, skip: (relative) => floor.isLocal(relative) })) yield { path: entry.path, relative: entry.relative, symlink: entry.kind === 'symlink' };
        })()
      : [{ path: base, relative: start.base.relative, symlink: false }];
    const max = input.max_count ?? GREP_DEFAULT_MAX;
    const lines: string[] = [];
    let hidden = 0;
    let files = 0;
    search: for await (const candidate of candidates) {
      if (filter && start.directory && !filter(filterOnName ? basename(candidate.path) : toPosix(relative(base, candidate.path)))) continue;
      const target = await openable(candidate, context, floor);
      if (target === 'protected') {
        hidden++;
        continue;
      }
      if (target === undefined) continue;
      const text = await readText(target).catch(() => undefined);
      if (text === undefined) continue;
      files++;
      const shown = toPosix(relative(context.cwd, candidate.path));
      const fileLines = text.split('\n');
      for (let index = 0; index < fileLines.length; index++) {
        const line = (fileLines[index] as string).replace(/\r$/, '');
        if (!regex.test(line)) continue;
        lines.push(`${shown}:${index + 1}:${cutLine(line, LINE_CAP)}`);
        if (lines.length >= max) break search;
      }
    }
    const note = protectedNote(hidden, 'not searched');
    if (lines.length === 0) return { ok: true, output: `no matches for /${input.pattern}/ in ${files} ${files === 1 ? 'file' : 'files'}${note}` };
    const stopped = lines.length >= max ? `\n(stopped at max_count=${max} matching lines)` : '';
    return { ok: true, output: lines.join('\n') + stopped + note };
  },
});
