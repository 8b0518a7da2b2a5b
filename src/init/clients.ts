/**
 * The four client configurations `init` writes (SPEC §6 "Client configs"), each naming the
 * launcher by its absolute real path: a client started in any subdirectory (or with a different
 * working directory for its servers) still finds it, where a relative `bin/majordomus-mcp` only
 * works in a checkout of majordomus itself. What each entry holds is what the client's own loader
 * accepts (docs/INIT.md cites the sources).
 */
import type { TomlEntry } from './toml-config.js';
import { nestedUnder } from './text.js';

/** Gemini CLI's request timeout for the server, in ms: 10 minutes, room for a first launch that builds. */
export const GEMINI_TIMEOUT_MS = 600_000;
/** Codex waits 10 s for a server to start by default; a first launch may install and build. */
export const CODEX_STARTUP_TIMEOUT_SEC = 120;

/** One client's configuration file and the entry `init` puts in it. */
export type ClientConfig =
  | {
      client: string;
      format: 'json';
      /** Relative to the root; the first that exists is merged into, else the first is created. */
      files: readonly string[];
      /** Where the entry goes. */
      path: readonly string[];
      entry: Record<string, unknown>;
      /** The whole document of a new file. */
      fresh: Record<string, unknown>;
    }
  | { client: string; format: 'toml'; files: readonly string[]; path: readonly string[]; entry: TomlEntry };

/** The configurations, in the order `init` reports them. */
export function clientConfigs(launcher: string): ClientConfig[] {
  const claude = { type: 'stdio', command: launcher, args: [], env: {} };
  const gemini = { command: launcher, args: [], timeout: GEMINI_TIMEOUT_MS };
  const opencode = { type: 'local', command: [launcher], enabled: true };
  return [
    { client: 'Claude Code', format: 'json', files: ['.mcp.json'], path: ['mcpServers', 'majordomus'], entry: claude, fresh: nestedUnder(['mcpServers', 'majordomus'], claude) },
    { client: 'Gemini CLI', format: 'json', files: ['.gemini/settings.json'], path: ['mcpServers', 'majordomus'], entry: gemini, fresh: nestedUnder(['mcpServers', 'majordomus'], gemini) },
    {
      client: 'Codex',
      format: 'toml',
      files: ['.codex/config.toml'],
      path: ['mcp_servers', 'majordomus'],
      // required: Codex otherwise sends its first model request without waiting for the server, so
      // a one-shot `codex exec` never sees majordomus's tools; a launcher that cannot start is then
      // said at once instead of silently missing.
      entry: { command: launcher, args: [], startup_timeout_sec: CODEX_STARTUP_TIMEOUT_SEC, required: true },
    },
    {
      client: 'opencode',
      format: 'json',
      files: ['opencode.json', 'opencode.jsonc'],
      path: ['mcp', 'majordomus'],
      entry: opencode,
      fresh: { $schema: 'https://opencode.ai/config.json', ...nestedUnder(['mcp', 'majordomus'], opencode) },
    },
  ];
}
