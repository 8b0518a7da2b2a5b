/**
 * Which HTTP engine serves. uWebSockets.js is the default and the fast one, but it is a native
 * addon: where its binary for this Node.js cannot load (Node 24's needs glibc 2.38; Debian 12 has
 * 2.36) the same routes are served by node:http, and the reason is told once. The adapters are
 * imported only here, and only the one that serves: a system without a loadable uWS never touches
 * it again, and a uWS server never loads `ws`. `MAJORDOMUS_HTTP_ENGINE` forces one
 * (docs/DECISIONS.md, "Two HTTP engines").
 */
import type { LocalErrorCode } from '../platform/errors.js';
import { uwsLoadProblem } from '../platform/uws.js';
import type { HttpEngine } from '../platform/settings.js';
import type { ListeningServer, ServerOptions, ServerStart } from './server-contract.js';

export type EngineStart =
  | { ok: true; server: ListeningServer; /** Why uWS does not serve, when it was wanted and node:http does. */ fallback: string | null }
  | { ok: false; reason: string; code: Extract<LocalErrorCode, 'MAJ_HTTP_ENGINE' | 'MAJ_PORT_UNAVAILABLE'> };

/** Starts the forced engine, or (null) uWS when it loads here and node:http when it does not. */
export async function startServer(forced: HttpEngine | null, options: ServerOptions): Promise<EngineStart> {
  let fallback: string | null = null;
  if (forced !== 'node') {
    const why = uwsLoadProblem();
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
