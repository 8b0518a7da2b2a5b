/** write_file: creates or replaces a file, creating its parent directories. */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { resolveToolPath } from '../paths.js';
import { defineTool, failure } from './common.js';

const schema = z.object({
  path: z.string().min(1).describe('File path, relative to the working directory or absolute (inside the checkout).'),
  content: z.string().describe('The whole new content of the file.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create a file or replace its whole content; parent directories are created. Prefer edit_file to change part of an existing file.',
  schema,
  async run(input, context, { floor }) {
    const checked = await resolveToolPath(input.path, context, floor, 'write');
    if (!checked.ok) return checked.outcome;
    const { real, shown } = checked.path;
    const existed = await stat(real).then((info) => (info.isDirectory() ? 'directory' : 'file'), () => 'none');
    if (existed === 'directory') return failure(`${shown} is a directory`);
    try {
      await mkdir(dirname(real), { recursive: true });
      await writeFile(real, input.content);
    } catch (error) {
      return failure(`cannot write ${shown}: ${(error as Error).message}`);
    }
    // The model wrote every byte of it: it may edit it next without reading it back.
    context.readFiles.add(real);
    const bytes = Buffer.byteLength(input.content);
    return { ok: true, output: `${existed === 'file' ? 'replaced' : 'created'} ${shown} (${bytes} bytes)` };
  },
});
