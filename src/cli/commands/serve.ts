/**
 * `majordomus serve`: the shared server without a stdio session. It joins the checkout's
 * election: when a server already runs it names it and exits 0.
 */
import { fstatSync } from 'node:fs';
import { EXIT, MajordomusError } from '../../platform/errors.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../shared/address.js';
import { log } from '../../platform/log.js';
import { settings } from '../../platform/settings.js';
import { Shutdown } from '../../hub/shutdown.js';
import { elect } from '../../shared/election.js';
import { LeaseUnavailable, releaseLeaseSync } from '../../shared/lease.js';
import { locateCheckout, type Checkout } from '../../shared/locate.js';
import type { Owner } from '../../hub/owner.js';
import { portOption, usageError, type ParsedArgs } from '../args.js';

function stdinIsPipe(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** Elects; as the winner starts the server, else names the running one (null). */
async function startOwner(
  args: ParsedArgs,
  checkout: Checkout,
  host: string,
  port: number,
  holding: (token: string | null) => void,
): Promise<Owner | null> {
  let outcome;
  try {
    outcome = await elect({ checkout });
  } catch (error) {
    if (error instanceof LeaseUnavailable) throw new MajordomusError('MAJ_LEASE', error.message);
    throw error;
  }
  if (outcome.role === 'bridge') {
    log.info(`a server already serves this checkout: ${outcome.url} (Swagger UI ${outcome.url}/docs)`);
    return null;
  }
  const { lease, predecessor, lock } = outcome;
  holding(lease.token);
  const [{ loadServing }, { serveOnLease, CannotShare }] = await Promise.all([import('../../runtime/load.js'), import('../../hub/owner.js')]);
  try {
    return await serveOnLease({ checkout, lease, predecessor, lock, host, port, load: () => loadServing(args.global, process.cwd()) });
  } catch (error) {
    holding(null);
    // Its own code when it has one (MAJ_HTTP_ENGINE, MAJ_INTERNAL); a port otherwise.
    if (error instanceof CannotShare) throw error.cause instanceof MajordomusError ? error.cause : new MajordomusError('MAJ_PORT_UNAVAILABLE', error.message);
    throw error;
  }
}

export async function runServe(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError('serve takes no arguments');
  const host = String(args.options.host ?? DEFAULT_HOST);
  const port = portOption(args.options.port, 'port', settings().httpPort ?? DEFAULT_PORT);
  const checkout = await locateCheckout(args.global.repo ?? process.cwd());

  // Signals are handled from before the election: a lease this process holds is always removed.
  const shutdown = new Shutdown();
  let heldToken: string | null = null;
  shutdown.addUrgent(() => {
    if (heldToken !== null) releaseLeaseSync(checkout.leasePath, heldToken);
  });
  const signalled = new Promise<'stop'>((resolve) => shutdown.handleSignals(() => resolve('stop')));
  // A pipe on stdin ties the server to its parent: EOF stops it (once it is known whether this
  // process serves at all). A terminal, /dev/null or a file (nohup, a service manager) does not.
  const stdinClosed = new Promise<'stop'>((resolve) => {
    if (!stdinIsPipe()) return;
    process.stdin.on('end', () => resolve('stop'));
    process.stdin.on('error', () => resolve('stop'));
    process.stdin.resume();
  });

  const starting = startOwner(args, checkout, host, port, (token) => (heldToken = token));
  // A start cut short by a signal finishes first (bounded by the shutdown grace); then the owner
  // it made, if any, closes.
  shutdown.add(async () => {
    const owner = await starting.catch(() => null);
    await owner?.close();
  });
  const started = await Promise.race([starting, signalled]);
  if (started !== 'stop' && started !== null) await Promise.race([signalled, stdinClosed]);
  await shutdown.run('serve stopping');
  return EXIT.ok;
}
