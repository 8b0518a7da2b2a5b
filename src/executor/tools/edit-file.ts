/** edit_file: replaces a unique string (or every occurrence) in a file read in this conversation; answers the diff. */
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { replacementDiff } from '../diff.js';
import { resolveToolPath } from '../paths.js';
import { defineTool, failure } from './common.js';

const schema = z.object({
  path: z.string().min(1).describe('File path, relative to the working directory or absolute (inside the checkout).'),
  old_string: z.string().min(1).describe('The exact text to replace, with enough context to be unique in the file.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring old_string to be unique.'),
});

function occurrences(text: string, search: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) found.push(at);
  return found;
}

export const editFileTool = defineTool({
  name: 'edit_file',
  description: 'Replace old_string with new_string in a file you have read with read_file. old_string must occur exactly once unless replace_all is true. Answers a diff of the change.',
  schema,
  async run(input, context, { floor }) {
    if (input.old_string === input.new_string) return failure('old_string and new_string are the same: there is nothing to change');
    const checked = await resolveToolPath(input.path, context, floor, 'write');
    if (!checked.ok) return checked.outcome;
    const { real, shown } = checked.path;
    if (!context.readFiles.has(real)) return failure(`${shown} has not been read in this conversation: read it with read_file first, then edit it`);
    let before: string;
    try {
      before = await readFile(real, 'utf8');
    } catch (error) {
      return failure((error as NodeJS.ErrnoException).code === 'ENOENT' ? `${shown} does not exist` : `cannot read ${shown}: ${(error as Error).message}`);
    }
    const found = occurrences(before, input.old_string);
    if (found.length === 0) return failure(`old_string was not found in ${shown}; read the file again and copy the text exactly, whitespace included`);
    if (found.length > 1 && input.replace_all !== true) {
      return failure(`old_string occurs ${found.length} times in ${shown}: add surrounding lines to make it unique, or set replace_all`);
    }
    const after = before.split(input.old_string).join(input.new_string);
    try {
      await writeFile(real, after);
    } catch (error) {
      return failure(`cannot write ${shown}: ${(error as Error).message}`);
    }
    const count = found.length === 1 ? '1 replacement' : `${found.length} replacements`;
    return { ok: true, output: `edited ${shown} (${count})\n${replacementDiff(shown, before, found, input.old_string, input.new_string)}` };
  },
});
