/** `majordomus serve`: the shared server without a stdio session. */
import { EXIT } from '../../errors.js';
import { startHttpThread } from '../../http/thread.js';
import { isLoopbackHost } from '../../http/guard.js';
import { log } from '../../log.js';
import { PeerBoard } from '../../peers/board.js';
import { loadServing } from '../../runtime/load.js';
import { Runtime } from '../../runtime/runtime.js';
import { Shutdown } from '../../runtime/shutdown.js';
import { portOption, usageError, type ParsedArgs } from '../args.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8741;

export async function runServe(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError('serve takes no arguments');
  const host = String(args.options.host ?? DEFAULT_HOST);
  const port = portOption(args.options.port, 'port', DEFAULT_PORT);
  if (!isLoopbackHost(host)) log.warn(`--host ${host} is not a loopback address: other machines can reach this server`);

  const loaded = await loadServing(args.global);
  let url: string | null = null;
  const runtime = new Runtime({ ...loaded, board: new PeerBoard(), url: () => url });
  const http = await startHttpThread(runtime, { host, port, fallbackToFreePort: true, leaseholder: true });
  url = http.url;
  if (http.fellBackFrom !== null) log.info(`port ${http.fellBackFrom} is taken; bound ${http.port} instead`);
  log.info(`serving ${url} — Swagger UI ${url}/docs · OpenAPI ${url}/openapi.json · API ${url}/api/v1/ · MCP ${url}/mcp`);

  const shutdown = new Shutdown();
  shutdown.add(() => http.stop());
  await new Promise<void>((resolve) => {
    shutdown.handleSignals(() => resolve());
    if (!process.stdin.isTTY) {
      // A pipe on stdin ties the server to its parent: EOF stops it.
      process.stdin.on('end', () => resolve());
      process.stdin.on('error', () => resolve());
      process.stdin.resume();
    }
  });
  await shutdown.run('serve stopping');
  process.stdin.destroy();
  return EXIT.ok;
}
