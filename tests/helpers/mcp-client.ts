/**
 * The MCP SDK's own client, connected over stdio to `node dist/src/cli/main.js mcp …` running in
 * a fixture: what Claude Code, Codex or Gemini CLI do when they start the server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MAIN_JS, cliEnv } from './cli.js';
import { isAlive, waitFor, withTimeout } from './wait.js';

/** Generous for a loaded two-core machine; well under the test timeout, so cleanup still runs. */
const CONNECT_TIMEOUT_MS = 40_000;

export interface McpClientOptions {
  /** The working directory of the server (the fixture root). */
  cwd: string;
  /** `mcp --standalone` instead of `mcp`. */
  standalone?: boolean;
  /** Options put before `mcp` (global options such as `--discovery`). */
  globalArgs?: readonly string[];
  /** Options put after `mcp`. */
  args?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  clientInfo?: { name: string; version: string };
  /** The capabilities the client declares at initialize (e.g. `experimental: {'claude/channel': {}}`). */
  capabilities?: Record<string, unknown>;
}

export interface McpConnection {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  /** The server's pid (known once connected). */
  readonly pid: number;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Closes the client (stdin EOF, then the SDK's SIGTERM/SIGKILL) and waits until the process is gone. */
  close(): Promise<void>;
}

/** Starts the server and runs `initialize`. Call `close()` in `afterEach`. */
export async function connectMcp(options: McpClientOptions): Promise<McpConnection> {
  const args = [MAIN_JS, ...(options.globalArgs ?? []), 'mcp', ...(options.standalone ? ['--standalone'] : []), ...(options.args ?? [])];
  const env = Object.fromEntries(
    Object.entries(cliEnv(options.env)).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: options.cwd, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    stderr += chunk.toString();
  });
  const client = new Client(options.clientInfo ?? { name: 'majordomus-tests', version: '1.0.0' }, options.capabilities ? { capabilities: options.capabilities } : undefined);
  let pid = -1;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await client.close().catch(() => {});
      if (pid > 0) await waitFor(() => !isAlive(pid), { what: `majordomus mcp (pid ${pid}) to exit`, timeoutMs: 20_000 });
    })();
    return closing;
  };
  try {
    // Bounded: a server that never answers initialize must not outlive the test that started it.
    await withTimeout(client.connect(transport), CONNECT_TIMEOUT_MS, 'majordomus mcp to answer initialize');
    pid = transport.pid ?? -1;
  } catch (error) {
    pid = transport.pid ?? -1;
    await close();
    throw new Error(`cannot connect to majordomus mcp: ${(error as Error).message}\nstderr:\n${stderr}`);
  }
  return { client, transport, pid, stderr: () => stderr, close };
}
