/**
 * The uWebSockets.js adapter: the app, its listen socket and its routes. A request is read into a
 * plain `HttpRequest` and handed to the router (src/http/uws-request.ts), its reply written back
 * whole or as a stream (src/http/uws-reply.ts); the live page's WebSocket has a route of its own
 * (src/http/uws-live.ts). Nothing outside these four files knows uWS; src/http/engine.ts loads
 * them only when uWS loads on this system.
 * It runs in the HTTP thread only; the app must be closed before that thread ends (a uWS app left
 * open in an ending thread aborts the process).
 */
import uWS from '@based/uws';
import { bindPort, type LiveRoute, type ListeningServer, type RequestHandler, type ServerOptions, type ServerStart } from './server-contract.js';
import { liveBehavior, type LiveData } from './uws-live.js';
import { serveRequest } from './uws-request.js';

/** What this uWS build has beyond its published typings: `close()` and listen with options. */
interface UwsApp {
  close(): void;
  listen(host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void): UwsApp;
}

// uWS shares a port with other processes (SO_REUSEPORT) unless told otherwise.
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

export class UwsServer implements ListeningServer {
  readonly engine = 'uws';
  readonly #app: UwsApp;
  #listenSocket: uWS.us_listen_socket | null = null;
  #port = 0;
  #requestedPort = 0;

  private constructor(handle: RequestHandler, live: LiveRoute | undefined) {
    const app = uWS.App();
    if (live) app.ws<LiveData>(live.path, liveBehavior(live));
    this.#app = app.any('/*', (res, req) => serveRequest(res, req, handle)) as unknown as UwsApp;
  }

  /** Binds (falling back to a free port when asked); the reason when nothing could be bound. */
  static async start(options: ServerOptions): Promise<ServerStart> {
    const server = new UwsServer(options.handle, options.live);
    const bound = await bindPort((host, port) => server.#listen(host, port), options);
    if ('reason' in bound) {
      server.close();
      return { ok: false, reason: bound.reason };
    }
    server.#port = bound.port;
    server.#requestedPort = options.port;
    return { ok: true, server };
  }

  get port(): number {
    return this.#port;
  }

  get requestedPort(): number {
    return this.#requestedPort;
  }

  /** Stops listening and closes every connection. Safe to call twice. */
  close(): void {
    if (this.#listenSocket) uWS.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = null;
    this.#app.close();
  }

  #listen(host: string, port: number): Promise<number | null> {
    return new Promise((resolve) => {
      this.#app.listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) return resolve(null);
        this.#listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      });
    });
  }
}
