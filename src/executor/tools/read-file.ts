/** read_file: a file's lines, numbered like `cat -n`, a window at a time. Marks the file as read for edit_file. */
import { readRegular } from '../../platform/confine.js';
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
    // A regular file only: a FIFO or a device is refused at once, never waited on.
    const read = await readRegular(real, READ_FILE_MAX_BYTES);
    if (!read.ok) {
      if (read.reason === 'missing') return failure(`${shown} does not exist`);
      if (read.reason === 'too_large') return failure(`${shown} ${read.detail.replace(/limit$/, 'limit of read_file')}; use grep, or bash with sed -n`);
      if (read.reason === 'not_regular' && read.detail.includes('a directory')) return failure(`${shown} is a directory; use glob to list it`);
      return failure(`cannot read ${shown}: it ${read.detail}`);
    }
    const bytes = read.bytes;
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
