/**
 * `majordomus mcp`: MCP on stdio. Plain `mcp` joins the checkout's shared server (owning it,
 * bridging to it, or serving alone when it cannot share); `--standalone` serves this client
 * alone and writes nothing; `--inspect` prints what would be served.
 */
import { EXIT } from '../../platform/errors.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../shared/address.js';
import { log } from '../../platform/log.js';
import { settings } from '../../platform/settings.js';
import { serveStdio } from '../../mcp/stdio.js';
import { Shutdown } from '../../hub/shutdown.js';
import { ClientLink } from '../../hub/link.js';
import { locateCheckout } from '../../shared/locate.js';
import { choiceOption, portOption, usageError, type ParsedArgs } from '../args.js';

function checkCombination(args: ParsedArgs): void {
  const { inspect, standalone, format } = args.options;
  const httpGiven = args.options['http-host'] !== undefined || args.options['http-port'] !== undefined;
  if (args.positionals.length > 0) throw usageError(`mcp takes no arguments, not "${args.positionals[0]}"`);
  if (inspect && standalone) throw usageError('--inspect and --standalone exclude each other');
  if (format !== undefined && !inspect) throw usageError('--format belongs to --inspect');
  if (httpGiven && (inspect || standalone)) throw usageError('--http-host/--http-port have no meaning without a shared server');
}

export async function runMcp(args: ParsedArgs): Promise<number> {
  checkCombination(args);
  if (args.options.inspect) {
    const format = choiceOption(args.options.format, 'format', ['text', 'json'] as const, 'text');
    const { runInspect } = await import('./inspect.js');
    return runInspect(args.global, format);
  }
  if (args.options.standalone) return serveStandalone(args);
  return serveShared(args);
}

/** This client alone: no port, no lease, no peers but itself, nothing written. */
async function serveStandalone(args: ParsedArgs): Promise<number> {
  const [{ loadServing }, { aloneSession }] = await Promise.all([import('../../runtime/load.js'), import('../../hub/alone.js')]);
  const loaded = await loadServing(args.global);
  const session = aloneSession(loaded);
  log.info(`serving ${loaded.layer.index.objects.length} objects to this client alone (${loaded.layer.index.state})`);
  const shutdown = new Shutdown();
  const stopped = new Promise<void>((resolve) => shutdown.handleSignals(() => resolve()));
  await Promise.race([serveStdio(session, process.stdin, process.stdout), stopped]);
  session.close();
  return EXIT.ok;
}

async function serveShared(args: ParsedArgs): Promise<number> {
  const cwd = process.cwd();
  const checkout = await locateCheckout(args.global.repo ?? cwd);
  const link = new ClientLink({
    checkout,
    global: args.global,
    cwd,
    host: String(args.options['http-host'] ?? DEFAULT_HOST),
    port: portOption(args.options['http-port'], 'http-port', settings().httpPort ?? DEFAULT_PORT),
  });
  // Signals are handled from before the election: a lease this process holds is always removed.
  const shutdown = new Shutdown();
  const starting = link.start();
  shutdown.addUrgent(() => link.releaseLeaseNow());
  // A start cut short by a signal finishes first (bounded by the shutdown grace), so what it
  // started is closed and no lease it wrote survives.
  shutdown.add(() => starting.catch(() => undefined));
  shutdown.add(() => link.abort());
  const signalled = new Promise<'signal'>((resolve) => shutdown.handleSignals(() => resolve('signal')));
  if ((await Promise.race([starting.then(() => 'started' as const), signalled])) === 'signal') {
    await shutdown.run('signal during start');
    return EXIT.ok;
  }
  const ended = await Promise.race([serveStdio(link, process.stdin, process.stdout).then(() => 'eof' as const), signalled]);
  if (ended === 'eof') {
    // The client is gone; a peer may still be attached (invariant: no process without a client).
    await Promise.race([link.close(), signalled]);
  }
  await shutdown.run(ended === 'eof' ? 'the client and every peer have gone' : 'signal');
  return EXIT.ok;
}
