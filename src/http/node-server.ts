/**
 * The node:http engine: the server, its listen socket and its connections. A request is read into
 * a plain `HttpRequest` and handed to the router (src/http/node-request.ts), its reply written back
 * whole or as a stream (src/http/node-reply.ts); the live page's WebSocket is src/http/node-live.ts.
 * It serves exactly what the uWS engine serves, where uWebSockets.js cannot load (src/http/engine.ts
 * chooses); nothing outside these four files knows node:http's server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bindPort, type ListeningServer, type ServerOptions, type ServerStart } from './server-contract.js';
import { NodeLive } from './node-live.js';
import { serveRequest } from './node-request.js';

/**
 * How long a kept-alive connection may sit idle: uWS's HTTP idle timeout. Clients (undici) take
 * the `Keep-Alive: timeout=10` hint minus a margin, so they never reuse a connection being closed.
 */
const KEEP_ALIVE_MS = 10_000;

export class NodeServer implements ListeningServer {
  readonly engine = 'node';
  readonly #server: Server;
  readonly #live: NodeLive | null;
  #port = 0;
  #requestedPort = 0;
  #closed = false;

  private constructor(options: ServerOptions) {
    const { handle } = options;
    this.#server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => serveRequest(req, res, handle));
    this.#live = options.live ? new NodeLive(options.live) : null;
    // Only with a WebSocket route: node:http then hands every upgrade request to it (without a
    // listener it serves them as plain requests).
    const live = this.#live;
    if (live) this.#server.on('upgrade', (req, socket, head: Buffer) => live.upgrade(req, socket as Socket, head));
  }

  /** Binds (falling back to a free port when asked); the reason when nothing could be bound. */
  static async start(options: ServerOptions): Promise<ServerStart> {
    const server = new NodeServer(options);
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

  /** Stops listening and closes every connection (open streams and page sockets too). Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#live?.close();
    this.#server.close();
    this.#server.closeAllConnections();
  }

  #listen(host: string, port: number): Promise<number | null> {
    return new Promise((resolve) => {
      const failed = (): void => resolve(null);
      this.#server.once('error', failed);
      // Never a shared port (uWS listens with LIBUS_LISTEN_EXCLUSIVE_PORT): a taken one fails here.
      this.#server.listen({ host, port, exclusive: true }, () => {
        this.#server.off('error', failed);
        resolve((this.#server.address() as AddressInfo).port);
      });
    });
  }
}
