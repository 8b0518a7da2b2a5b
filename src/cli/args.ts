/**
 * The command line, parsed once at the edge with node's own `parseArgs` and frozen. Each command
 * names the options it accepts; anything else is a usage error (exit 2).
 */
import { parseArgs } from 'node:util';
import { MajordomusError } from '../platform/errors.js';
import type { LayerSelection } from '../layer/load.js';

const OPTIONS = {
  repo: { type: 'string' },
  discovery: { type: 'string' },
  strict: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  standalone: { type: 'boolean' },
  inspect: { type: 'boolean' },
  format: { type: 'string' },
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  side: { type: 'string' },
  kind: { type: 'string' },
  check: { type: 'boolean' },
  json: { type: 'boolean' },
  resume: { type: 'string' },
  model: { type: 'string' },
  mode: { type: 'string' },
  'max-turns': { type: 'string' },
  'context-tokens': { type: 'string' },
  'base-url': { type: 'string' },
  'api-key-env': { type: 'string' },
  hooks: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  guard: { type: 'boolean' },
  'no-guard': { type: 'boolean' },
  print: { type: 'boolean' },
  npx: { type: 'boolean' },
  local: { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;

const GLOBAL: readonly OptionName[] = ['repo', 'discovery', 'strict', 'help', 'version'];

export const COMMANDS = {
  mcp: ['standalone', 'inspect', 'format', 'http-host', 'http-port'],
  serve: ['host', 'port'],
  capabilities: ['format', 'side', 'kind'],
  generate: ['check'],
  exec: ['json', 'resume', 'model', 'mode', 'max-turns', 'context-tokens', 'base-url', 'api-key-env'],
  guard: ['mode', 'hooks', 'format'],
  init: ['npx', 'local', 'force', 'dry-run', 'guard', 'no-guard'],
  open: ['print'],
  doctor: ['json', 'timeout'],
} as const satisfies Record<string, readonly OptionName[]>;

export type CommandName = keyof typeof COMMANDS;

export interface ParsedArgs {
  command: CommandName | null;
  positionals: readonly string[];
  global: LayerSelection;
  options: Readonly<Partial<Record<OptionName, string | boolean>>>;
  help: boolean;
  version: boolean;
}

function usage(message: string): MajordomusError {
  return new MajordomusError('MAJ_USAGE', `${message} (see majordomus --help)`);
}

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usage(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  if (first !== undefined && !(first in COMMANDS)) throw usage(`unknown command "${first}"`);
  const command = (first ?? null) as CommandName | null;

  const allowed = new Set<string>([...GLOBAL, ...(command ? COMMANDS[command] : [])]);
  for (const name of Object.keys(values)) {
    if (!allowed.has(name)) throw usage(`--${name} is not an option of ${command ?? 'majordomus'}`);
  }
  const discovery = values.discovery ?? 'vcs';
  if (discovery !== 'vcs' && discovery !== 'filesystem') {
    throw usage(`--discovery must be vcs or filesystem, not "${discovery}"`);
  }
  if (values.repo !== undefined && values.repo.trim() === '') throw usage('--repo needs a directory');
  return Object.freeze({
    command,
    positionals: Object.freeze(rest),
    global: Object.freeze({ repo: values.repo, discovery, strict: values.strict ?? false }),
    options: Object.freeze({ ...values }),
    help: values.help ?? false,
    version: values.version ?? false,
  });
}

/** A port option: an integer 0–65535 (0 = any free port). */
export function portOption(value: string | boolean | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const text = String(value);
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--${name} must be a port 0–65535, not "${text}"`);
  return port;
}

/** An integer option within `min`–`max`. */
export function integerOption(value: string | boolean | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const text = String(value);
  const number = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) throw usage(`--${name} must be an integer ${min}–${max}, not "${text}"`);
  return number;
}

/** An enumerated option. */
export function choiceOption<T extends string>(
  value: string | boolean | undefined,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
  throw usage(`--${name} must be one of ${choices.join(', ')}, not "${String(value)}"`);
}

export { usage as usageError };
