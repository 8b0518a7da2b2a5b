/**
 * Which HTTP engine serves. uWebSockets.js is the default and the fast one, but it is a native
 * addon: where its binary for this Node.js cannot load (Node 24's needs glibc 2.38; Debian 12 has
 * 2.36) the same routes are served by node:http, and the reason is told once. The adapters are
 * imported only here, and only the one that serves: a system without a loadable uWS never touches
 * it again, and a uWS server never loads `ws`. `MAJORDOMUS_HTTP_ENGINE` forces one
 * (docs/DECISIONS.md, "Two HTTP engines").
 */
import { createRequire } from 'node:module';
import { errorMessage, type LocalErrorCode } from '../platform/errors.js';
import type { HttpEngine } from '../platform/settings.js';
import type { ListeningServer, ServerOptions, ServerStart } from './server-contract.js';

export type EngineStart =
  | { ok: true; server: ListeningServer; /** Why uWS does not serve, when it was wanted and node:http does. */ fallback: string | null }
  | { ok: false; reason: string; code: Extract<LocalErrorCode, 'MAJ_HTTP_ENGINE' | 'MAJ_PORT_UNAVAILABLE'> };

/** Starts the forced engine, or (null) uWS when it loads here and node:http when it does not. */
export async function startServer(forced: HttpEngine | null, options: ServerOptions): Promise<EngineStart> {
  let fallback: string | null = null;
  if (forced !== 'node') {
    const why = uwsCannotLoad();
    if (why === null) {
      const { UwsServer } = await import('./uws-server.js');
      return outcome(await UwsServer.start(options), null);
    }
    if (forced === 'uws') return { ok: false, code: 'MAJ_HTTP_ENGINE', reason: `MAJORDOMUS_HTTP_ENGINE=uws, but ${why}` };
    fallback = `${why}: serving with node:http`;
  }
  const { NodeServer } = await import('./node-server.js');
  return outcome(await NodeServer.start(options), fallback);
}

function outcome(start: ServerStart, fallback: string | null): EngineStart {
  return start.ok ? { ok: true, server: start.server, fallback } : { ok: false, reason: start.reason, code: 'MAJ_PORT_UNAVAILABLE' };
}

/**
 * Null when uWS loads here, else why not. Loaded with `require`, not `import()`: under Node 20 a
 * CommonJS module that throws while imported is also reported as an uncaught error, which ends
 * the thread even though the import's rejection was caught. The adapter's own `import` then
 * finds the module loaded.
 */
function uwsCannotLoad(): string | null {
  try {
    createRequire(import.meta.url)('@based/uws');
    return null;
  } catch (error) {
    return whyUwsCannotLoad(errorMessage(error));
  }
}

/**
 * One line from the loader's error: uws.js wraps the system's (`…libc.so.6: version
 * \`GLIBC_2.38' not found (required by …/uws_linux_x64_137.node)`) after a paragraph of advice.
 */
export function whyUwsCannotLoad(message: string): string {
  const runtime = `Node.js ${process.versions.node.split('.')[0]}`;
  const glibc = /`(GLIBC_[\d.]+)' not found/.exec(message);
  if (glibc) return `uWebSockets.js cannot load on this system (its binary for ${runtime} needs ${glibc[1]})`;
  const cause = message.split('\n\n').at(-1)?.split('\n')[0]?.trim() ?? message;
  return `uWebSockets.js cannot load on this system (${runtime}: ${cause})`;
}
