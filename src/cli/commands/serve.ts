/**
 * `majordomus serve`: the shared server without a stdio session. It joins the checkout's
 * election: when a server already runs it names it and exits 0.
 */
import { EXIT, MajordomusError } from '../../errors.js';
import { log } from '../../log.js';
import { Shutdown } from '../../runtime/shutdown.js';
import { elect } from '../../shared/election.js';
import { LeaseUnavailable, releaseLeaseSync } from '../../shared/lease.js';
import { locateCheckout } from '../../shared/locate.js';
import { VERSION } from '../../version.js';
import { portOption, usageError, type ParsedArgs } from '../args.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8741;

export async function runServe(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError('serve takes no arguments');
  const host = String(args.options.host ?? DEFAULT_HOST);
  const port = portOption(args.options.port, 'port', DEFAULT_PORT);
  const cwd = process.cwd();
  const checkout = await locateCheckout(args.global.repo ?? cwd);

  let outcome;
  try {
    outcome = await elect({ checkout, version: VERSION });
  } catch (error) {
    if (error instanceof LeaseUnavailable) throw new MajordomusError('MAJ_LEASE', error.message);
    throw error;
  }
  if (outcome.role === 'bridge') {
    log.info(`a server already serves this checkout: ${outcome.url} (Swagger UI ${outcome.url}/docs)`);
    return EXIT.ok;
  }
  const { lease } = outcome;
  const [{ loadServing }, { Owner, CannotShare }] = await Promise.all([import('../../runtime/load.js'), import('../../shared/owner.js')]);
  let owner;
  try {
    owner = await Owner.start({
      loaded: await loadServing(args.global, cwd),
      lease,
      leasePath: checkout.leasePath,
      host,
      port,
      peersIssued: outcome.peersIssued,
    });
  } catch (error) {
    releaseLeaseSync(checkout.leasePath, lease.token);
    if (error instanceof CannotShare) throw new MajordomusError('MAJ_PORT_UNAVAILABLE', error.message);
    throw error;
  }

  const shutdown = new Shutdown();
  shutdown.addUrgent(() => owner.releaseLease());
  shutdown.add(() => owner.close());
  await new Promise<void>((resolve) => {
    shutdown.handleSignals(() => resolve());
    if (!process.stdin.isTTY) {
      // A pipe or file on stdin ties the server to its parent: EOF stops it.
      process.stdin.on('end', () => resolve());
      process.stdin.on('error', () => resolve());
      process.stdin.resume();
    }
  });
  await shutdown.run('serve stopping');
  return EXIT.ok;
}
