/**
 * `majordomus open`: the live page of this checkout's server, with its token. Reads the lease
 * (the one place the token is written, readable by its owner only), checks that its server
 * answers, prints `<url>/#token=<token>` and, when a display is there, has the system's opener
 * show it. The token travels in the fragment: a browser never sends a fragment to any server, and
 * the page removes it from the address bar at once. It never goes on a command line (any local
 * user reads those in /proc): the opener gets a 0600 file beside the lease that redirects to it.
 */
import { spawn } from 'node:child_process';
import { chmod, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MajordomusError, errorMessage, EXIT } from '../../platform/errors.js';
import { commandEnvironment } from '../../platform/child-env.js';
import { log } from '../../platform/log.js';
import { graphicalDisplay } from '../../platform/settings.js';
import { BIND_GRACE_MS, judgeLease, type Verdict } from '../../shared/election.js';
import { readLease } from '../../shared/lease.js';
import { locateCheckout, type Checkout } from '../../shared/locate.js';
import type { ParsedArgs } from '../args.js';

/** A server that is binding right now is waited for this long. */
const BINDING_WAIT_MS = 10_000;
const BINDING_POLL_MS = 200;

/** The page's address with the token in its fragment. */
export function pageAddress(url: string, token: string): string {
  return `${url.replace(/\/+$/, '')}/#token=${encodeURIComponent(token)}`;
}

/** The redirect page handed to the opener: a file only this user can read, never the token on a command line. */
export const REDIRECT_FILE = 'open.html';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page that sends the browser on to `address` at once (and offers a link if it does not). */
export function redirectPage(address: string): string {
  const href = escapeHtml(address);
  return `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${href}">\n<title>majordomus</title>\n<a href="${href}">Open the live page</a>\n`;
}

/** Writes the redirect page (0600, write then rename) in the lease's directory; answers its file URL. */
async function writeRedirect(checkout: Checkout, address: string): Promise<string> {
  const path = join(dirname(checkout.leasePath), REDIRECT_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, redirectPage(address), { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return pathToFileURL(path).href;
}

/** The system's opener for `platform`, or null when there is nowhere to show a page (`display`: settings' `graphicalDisplay()`). */
export function openerFor(platform: NodeJS.Platform, display: string | null): { command: string; args: string[] } | null {
  if (platform === 'darwin') return { command: 'open', args: [] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  if (display !== null) return { command: 'xdg-open', args: [] };
  return null;
}

async function liveServer(checkout: Checkout): Promise<Extract<Verdict, { kind: 'live' }>> {
  const deadline = Date.now() + BINDING_WAIT_MS;
  for (;;) {
    const reading = await readLease(checkout.leasePath).catch((error: unknown) => {
      throw new MajordomusError('MAJ_LEASE', `cannot read the lease ${checkout.leasePath}: ${errorMessage(error)}`);
    });
    const verdict = await judgeLease(reading, checkout, BIND_GRACE_MS, Date.now());
    if (verdict.kind === 'live') return verdict;
    if (verdict.kind !== 'binding' || Date.now() > deadline) {
      const why = verdict.kind === 'absent' ? 'there is no lease' : verdict.kind === 'binding' ? 'a server is still starting' : `the lease is ${verdict.kind} (${verdict.detail})`;
      throw new MajordomusError(
        'MAJ_NO_SERVER',
        `no live server for ${checkout.root}: ${why}. Start one with \`majordomus serve\` (or let an agent start \`majordomus mcp\`), then run majordomus open again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, BINDING_POLL_MS));
  }
}

/** Starts the opener and leaves it (a browser outlives this command); false when it could not start. */
function launch(opener: { command: string; args: string[] }, target: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(opener.command, [...opener.args, target], { detached: true, stdio: 'ignore', env: commandEnvironment() });
    child.once('error', (error) => {
      log.warn(`cannot start ${opener.command} (${error.message}); open the address above yourself`);
      resolve(false);
    });
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

export async function runOpen(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) {
    throw new MajordomusError('MAJ_USAGE', `open takes no arguments, not "${args.positionals.join(' ')}" (see majordomus open --help)`);
  }
  const checkout = await locateCheckout(args.global.repo ?? process.cwd());
  const server = await liveServer(checkout);
  const address = pageAddress(server.url, server.token);
  process.stdout.write(`${address}\n`); // -- stdout-ok: the command's answer
  if (args.options.print === true) return EXIT.ok;
  const opener = openerFor(process.platform, graphicalDisplay());
  if (opener === null) {
    log.info('no display (DISPLAY, WAYLAND_DISPLAY): open the address above in a browser');
    return EXIT.ok;
  }
  if (await launch(opener, await writeRedirect(checkout, address))) log.info(`opened the live page with ${opener.command}`);
  return EXIT.ok;
}
