/**
 * Reads one client's configuration the way `init` wrote it (the files and entry paths of
 * src/init/clients.ts) and answers the majordomus entry there, if any, and the command it starts.
 * Read only, bounded, never through a link (src/platform/confine.ts).
 */
import { join } from 'node:path';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { readRegular } from '../platform/confine.js';
import { errorMessage } from '../platform/errors.js';
import type { ClientConfig, EntryCommand } from '../init/clients.js';

export type ClientEntryReading =
  | { state: 'absent'; file: string }
  | { state: 'no-entry'; file: string }
  | { state: 'unparsable'; file: string; why: string }
  | { state: 'found'; file: string; command: EntryCommand | null };

const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

function valueAt(document: unknown, path: readonly string[]): unknown {
  let value = document;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The document of a JSON configuration; Claude Code's loader takes strict JSON only (docs/INIT.md). */
function parseJsonFile(config: ClientConfig, text: string): { document: unknown } | { why: string } {
  const errors: ParseError[] = [];
  const document: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  const [first] = errors;
  if (first !== undefined) return { why: `not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset})` };
  if (config.id === 'claude') {
    try {
      JSON.parse(text);
    } catch {
      return { why: 'holds comments or trailing commas, which Claude Code\'s loader refuses (it wants strict JSON)' };
    }
  }
  return { document };
}

/** The majordomus entry of `config` below `root`: absent file, no entry, unparsable, or found. */
export async function readClientEntry(root: string, config: ClientConfig): Promise<ClientEntryReading> {
  for (const file of config.files) {
    const read = await readRegular(join(root, file), MAX_CONFIG_BYTES);
    if (!read.ok && read.reason === 'missing') continue;
    if (!read.ok) return { state: 'unparsable', file, why: read.detail };
    const text = read.bytes.toString('utf8');
    if (text.trim() === '') return { state: 'no-entry', file };
    let document: unknown;
    if (config.format === 'json') {
      const parsed = parseJsonFile(config, text);
      if ('why' in parsed) return { state: 'unparsable', file, why: parsed.why };
      document = parsed.document;
    } else {
      try {
        document = parseToml(text);
      } catch (error) {
        return { state: 'unparsable', file, why: `not valid TOML (${errorMessage(error).split('\n')[0] ?? ''})` };
      }
    }
    const entry = valueAt(document, config.path);
    if (entry === undefined) return { state: 'no-entry', file };
    return { state: 'found', file, command: config.readCommand(entry) };
  }
  return { state: 'absent', file: config.files[0] as string };
}
