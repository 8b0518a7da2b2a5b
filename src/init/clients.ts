/**
 * The four client configurations `init` writes (SPEC §6 "Client configs") and `doctor` reads: for
 * each client its file, where the entry sits, the entry `init` puts there, and how to read the
 * command back out of an entry (each client spells it its own way). What each entry holds is what
 * the client's own loader accepts (docs/INIT.md cites the sources).
 */
import type { ServerCommand } from './server-command.js';
import type { TomlEntry } from './toml-config.js';
import { nestedUnder } from './text.js';

/**
 * Gemini CLI's timeout for the server, in ms: 10 minutes, Gemini CLI's own default, for connecting
 * (npx may download, a source checkout may build) and for a call (a follow lasts minutes).
 */
export const GEMINI_TIMEOUT_MS = 600_000;
/** Codex waits 10 s for a server to start by default; npx may download, a source checkout may build. */
export const CODEX_STARTUP_TIMEOUT_SEC = 120;

export type ClientId = 'claude' | 'gemini' | 'codex' | 'opencode';

/** What an entry starts: the executable, its arguments, what it adds to the environment. */
export interface EntryCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** false when the entry is switched off (opencode's `enabled: false`). */
  enabled: boolean;
}

interface ClientBase {
  id: ClientId;
  /** The client's name, as a person knows it. */
  client: string;
  /** Relative to the root; the first that exists is merged into, else the first is created. */
  files: readonly string[];
  /** Where the entry goes. */
  path: readonly string[];
  /** The command an entry of this client starts; null when it names none. */
  readCommand(entry: unknown): EntryCommand | null;
}

/** One client's configuration file and the entry `init` puts in it. */
export type ClientConfig =
  | (ClientBase & {
      format: 'json';
      entry: Record<string, unknown>;
      /** The whole document of a new file. */
      fresh: Record<string, unknown>;
    })
  | (ClientBase & { format: 'toml'; entry: TomlEntry });

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function stringMap(value: unknown): Record<string, string> {
  const map = record(value) ?? {};
  return Object.fromEntries(Object.entries(map).filter((pair): pair is [string, string] => typeof pair[1] === 'string'));
}

/** `{command, args, env}`: the spelling of Claude Code, Gemini CLI and Codex. */
function commandWithArgs(entry: unknown): EntryCommand | null {
  const value = record(entry);
  if (value === null || typeof value.command !== 'string' || value.command === '') return null;
  return { command: value.command, args: strings(value.args), env: stringMap(value.env), enabled: value.disabled !== true && value.enabled !== false };
}

/** opencode's `{command: [executable, ...args], environment}`. */
function commandArray(entry: unknown): EntryCommand | null {
  const value = record(entry);
  const [command, ...args] = strings(value?.command);
  if (value === null || command === undefined || command === '') return null;
  return { command, args, env: stringMap(value.environment), enabled: value.enabled !== false };
}

/** The configurations naming `server`, in the order `init` reports them. */
export function clientConfigs(server: ServerCommand): ClientConfig[] {
  const { command } = server;
  const args = [...server.args];
  const claude = { type: 'stdio', command, args, env: {} };
  const gemini = { command, args, timeout: GEMINI_TIMEOUT_MS };
  const opencode = { type: 'local', command: [command, ...args], enabled: true };
  return [
    {
      id: 'claude',
      client: 'Claude Code',
      format: 'json',
      files: ['.mcp.json'],
      path: ['mcpServers', 'majordomus'],
      entry: claude,
      fresh: nestedUnder(['mcpServers', 'majordomus'], claude),
      readCommand: commandWithArgs,
    },
    {
      id: 'gemini',
      client: 'Gemini CLI',
      format: 'json',
      files: ['.gemini/settings.json'],
      path: ['mcpServers', 'majordomus'],
      entry: gemini,
      fresh: nestedUnder(['mcpServers', 'majordomus'], gemini),
      readCommand: commandWithArgs,
    },
    {
      id: 'codex',
      client: 'Codex',
      format: 'toml',
      files: ['.codex/config.toml'],
      path: ['mcp_servers', 'majordomus'],
      // required: Codex otherwise sends its first model request without waiting for the server, so
      // a one-shot `codex exec` never sees majordomus's tools; a server that cannot start is then
      // said at once instead of silently missing.
      entry: { command, args, startup_timeout_sec: CODEX_STARTUP_TIMEOUT_SEC, required: true },
      readCommand: commandWithArgs,
    },
    {
      id: 'opencode',
      client: 'opencode',
      format: 'json',
      files: ['opencode.json', 'opencode.jsonc'],
      path: ['mcp', 'majordomus'],
      entry: opencode,
      fresh: { $schema: 'https://opencode.ai/config.json', ...nestedUnder(['mcp', 'majordomus'], opencode) },
      readCommand: commandArray,
    },
  ];
}
