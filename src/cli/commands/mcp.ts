/** `majordomus mcp`: MCP on stdio, `--standalone`, or `--inspect`. */
import { EXIT } from '../../errors.js';
import { log } from '../../log.js';
import { localBackend } from '../../mcp/local-backend.js';
import { McpSession } from '../../mcp/session.js';
import { serveStdio } from '../../mcp/stdio.js';
import { PeerBoard } from '../../peers/board.js';
import { loadServing } from '../../runtime/load.js';
import { Runtime } from '../../runtime/runtime.js';
import { choiceOption, type ParsedArgs } from '../args.js';

export async function runMcp(args: ParsedArgs): Promise<number> {
  if (args.options.inspect) {
    const format = choiceOption(args.options.format, 'format', ['text', 'json'] as const, 'text');
    const { runInspect } = await import('./inspect.js');
    return runInspect(args.global, format);
  }
  return serveAlone(args);
}

/** Serves this client alone: no port, no lease, no peers but itself, nothing written. */
async function serveAlone(args: ParsedArgs): Promise<number> {
  const loaded = await loadServing(args.global);
  const runtime = new Runtime({ ...loaded, board: new PeerBoard(), url: () => null });
  const session = new McpSession(localBackend(runtime, 'stdio'));
  log.info(`serving ${loaded.layer.index.objects.length} objects alone on stdio (${loaded.layer.index.state})`);
  await serveStdio(session, process.stdin, process.stdout);
  session.close();
  return EXIT.ok;
}
