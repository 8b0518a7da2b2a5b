/**
 * The executor's tools, each behind the permission floor: paths are checked by every tool, and
 * every output is redacted with the values of the protected files found for that run (the one
 * exception, `ask`, returns only the model's own words).
 */
import { realpathSync } from 'node:fs';
import { z } from 'zod';
import { Floor } from '../../floor/rules.js';
import { scanProtected, type ScanOptions } from '../../floor/protected-files.js';
import { DEFAULT_LOCAL_PATH } from '../../layer/identity.js';
import { Redactor } from '../../floor/redact.js';
import type { ExecutorTool, ToolContext, ToolOutcome } from '../tool.js';
import { askTool } from './ask.js';
import { bashTool } from './bash.js';
import type { ToolDefinition } from './common.js';
import { parseInput, toParameters } from './common.js';
import { editFileTool } from './edit-file.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readFileTool } from './read-file.js';
import { writeFileTool } from './write-file.js';

export interface ToolOptions {
  /** The checkout's root; deny globs are relative to it. Must be the ToolContext's root. */
  root: string;
  /** The policy's deny globs, added to the built-in floor. */
  deny: readonly string[];
  /** The manifest's local half (default `.ai/local`): always protected, whatever the policy. */
  localPath?: string;
  /** Values that are never redacted (the task id, the session id). */
  public?: readonly string[];
  /** `read-only` leaves write_file, edit_file and bash out of the set. */
  mode?: 'default' | 'read-only';
}

const optionsSchema = z.object({
  root: z.string().min(1),
  deny: z.array(z.string().min(1)).readonly(),
  localPath: z.string().min(1).optional(),
  public: z.array(z.string()).readonly().optional(),
  mode: z.enum(['default', 'read-only']).optional(),
});

/** The tools that change files or run commands, left out in read-only mode. */
export const WRITING_TOOLS: readonly string[] = ['write_file', 'edit_file', 'bash'];

const DEFINITIONS: readonly ToolDefinition<z.ZodType>[] = [readFileTool, writeFileTool, editFileTool, globTool, grepTool, bashTool, askTool];

function wrap<Schema extends z.ZodType>(definition: ToolDefinition<Schema>, floor: Floor, root: string, scanOptions: ScanOptions): ExecutorTool {
  return {
    name: definition.name,
    description: definition.description,
    parameters: toParameters(definition.schema),
    async run(input: unknown, context: ToolContext): Promise<ToolOutcome> {
      if (context.root !== root) throw new Error(`executor tools made for ${root} were run with root ${context.root}`);
      const parsed = parseInput(definition.name, definition.schema, input);
      if (!parsed.ok) return parsed.outcome;
      // ask answers only the model's own words; every other tool sees files and is redacted.
      const scan = definition.name === 'ask' ? { files: [], localDirectory: '', redactor: new Redactor([]) } : await scanProtected(root, floor, scanOptions);
      const outcome = await definition.run(parsed.value, context, { floor, scan });
      return { ...outcome, output: scan.redactor.redact(outcome.output) };
    },
  };
}

/**
 * A redactor of the protected values under `root` as they are now, for text that did not come
 * from a tool (tool outcomes are redacted already). Scans the checkout: call it per use.
 */
export async function protectedRedactor(options: Pick<ToolOptions, 'root' | 'deny' | 'localPath' | 'public'>): Promise<(text: string) => string> {
  const floor = new Floor({ deny: options.deny, localPath: options.localPath ?? DEFAULT_LOCAL_PATH });
  const { redactor } = await scanProtected(realpathSync(options.root), floor, { public: options.public ?? [] });
  return (text) => redactor.redact(text);
}

export { probeMasking } from '../mask.js';
export type { MaskingSupport } from '../mask.js';

/** The seven tools of the executor (four in read-only mode), behind the floor for `options.root`. */
export function createTools(options: ToolOptions): ExecutorTool[] {
  const valid = optionsSchema.parse(options);
  const root = realpathSync(valid.root);
  const floor = new Floor({ deny: valid.deny, localPath: valid.localPath ?? DEFAULT_LOCAL_PATH });
  const mode = valid.mode ?? 'default';
  const scanOptions: ScanOptions = { public: valid.public ?? [] };
  return DEFINITIONS.filter((definition) => mode === 'default' || !WRITING_TOOLS.includes(definition.name)).map((definition) => wrap(definition, floor, root, scanOptions));
}
