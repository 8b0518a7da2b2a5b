/** read_file: a file's lines, numbered like `cat -n`, a window at a time. Marks the file as read for edit_file. */
import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { resolveToolPath } from '../paths.js';
import { cutLine, defineTool, failure } from './common.js';

export const READ_DEFAULT_LIMIT = 2000;
export const READ_LINE_CAP = 2000;
/** Larger files are for grep or bash (`sed -n`), not for a window read that loads them whole. */
export const READ_FILE_MAX_BYTES = 20 * 1024 * 1024;

const schema = z.object({
  path: z.string().min(1).describe('File path, relative to the working directory or absolute (inside the checkout).'),
  offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1).'),
  limit: z.number().int().min(1).max(100_000).optional().describe(`How many lines to read (default ${READ_DEFAULT_LIMIT}).`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  description: `Read a text file. Answers its lines numbered from 1 ("   12\\tline"); reads ${READ_DEFAULT_LIMIT} lines unless limit says otherwise, starting at offset. Lines over ${READ_LINE_CAP} characters are cut. A file must be read before edit_file can change it.`,
  schema,
  async run(input, context, { floor }) {
    const checked = await resolveToolPath(input.path, context, floor, 'read');
    if (!checked.ok) return checked.outcome;
    const { real, shown } = checked.path;
    let size: number;
    try {
      const info = await stat(real);
      if (info.isDirectory()) return failure(`${shown} is a directory; use glob to list it`);
      size = info.size;
    } catch (error) {
      return failure((error as NodeJS.ErrnoException).code === 'ENOENT' ? `${shown} does not exist` : `cannot read ${shown}: ${(error as Error).message}`);
    }
    if (size > READ_FILE_MAX_BYTES) return failure(`${shown} is ${size} bytes, over the ${READ_FILE_MAX_BYTES}-byte limit of read_file; use grep, or bash with sed -n`);
    const bytes = await readFile(real);
    if (bytes.subarray(0, 8192).includes(0)) return failure(`${shown} is a binary file`);
    context.readFiles.add(real);
    if (bytes.length === 0) return { ok: true, output: `(${shown} is empty)` };
    const text = bytes.toString('utf8');
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop();
    const first = input.offset ?? 1;
    const limit = input.limit ?? READ_DEFAULT_LIMIT;
    if (first > lines.length) return failure(`${shown} has ${lines.length} lines; offset ${first} is past its end`);
    const window = lines.slice(first - 1, first - 1 + limit);
    const numbered = window.map((line, index) => `${String(first + index).padStart(6)}\t${cutLine(line.replace(/\r$/, ''), READ_LINE_CAP)}`);
    const last = first + window.length - 1;
    const more = last < lines.length ? `\n(lines ${first}-${last} of ${lines.length}; offset=${last + 1} reads on)` : '';
    return { ok: true, output: numbered.join('\n') + more };
  },
});
