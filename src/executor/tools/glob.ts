/** glob: files whose path (relative to `path`, default the working directory) matches a glob; sorted, capped. */
import { relative } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { toPosix, walkFiles } from '../../platform/walk.js';
import { defineTool, failure } from './common.js';
import { protectedNote, resolveSearchBase } from './search-base.js';

export const GLOB_MAX_RESULTS = 1000;

const schema = z.object({
  pattern: z.string().min(1).describe('Glob relative to path, e.g. "src/**/*.ts" or "*.md" (dotfiles included).'),
  path: z.string().min(1).optional().describe('Directory to search from (default: the working directory).'),
});

export const globTool = defineTool({
  name: 'glob',
  description: `List files matching a glob, sorted by path, at most ${GLOB_MAX_RESULTS}. .git and node_modules are not searched unless path is inside them.`,
  schema,
  async run(input, context, { floor }) {
    if (input.pattern.startsWith('/') || input.pattern.split('/').includes('..')) {
      return failure('pattern must be relative to path and stay beneath it: use path to search elsewhere in the checkout');
    }
    const start = await resolveSearchBase(input.path, context, floor);
    if (!start.ok) return start.outcome;
    if (!start.directory) return failure(`${start.base.shown} is not a directory`);
    const matches = picomatch(input.pattern, { dot: true });
    const found: string[] = [];
    let hidden = 0;
    for await (const entry of walkFiles(context.root, start.base.real, { signal: context.signal, skip: (path) => floor.isLocal(path) })) {
      if (!matches(toPosix(relative(start.base.real, entry.path)))) continue;
      if (floor.match(entry.relative)) {
        hidden++;
        continue;
      }
      found.push(toPosix(relative(context.cwd, entry.path)));
    }
    const note = protectedNote(hidden, 'left out');
    if (found.length === 0) return { ok: true, output: `no files match ${input.pattern}${note}` };
    found.sort();
    const shown = found.slice(0, GLOB_MAX_RESULTS);
    const more = found.length > GLOB_MAX_RESULTS ? `\n… and ${found.length - GLOB_MAX_RESULTS} more; narrow the pattern` : '';
    return { ok: true, output: shown.join('\n') + more + note };
  },
});
