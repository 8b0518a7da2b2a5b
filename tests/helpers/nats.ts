/**
 * A real NATS server for the federation tests: Debian's `nats-server` with JetStream, on a free
 * loopback port, its store in a temporary directory; killed (SIGKILL, as a crash) and restarted on
 * the same port and store mid-test. scripts/test-prerequisites.sh installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { makeTempDir } from './fixture-repo.js';
import { waitFor } from './wait.js';

/** Where Debian puts it (root's PATH has /usr/sbin, a user's may not). */
export const NATS_SERVER = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export class NatsServer {
  readonly port: number;
  readonly #store: string;
  readonly #cleanup: () => Promise<void>;
  #child: ChildProcess | null = null;
  #log = '';

  private constructor(port: number, store: string, cleanup: () => Promise<void>) {
    this.port = port;
    this.#store = store;
    this.#cleanup = cleanup;
  }

  /** Starts one on a free loopback port with a fresh store. */
  static async start(): Promise<NatsServer> {
    const store = await makeTempDir('majordomus-nats-');
    const server = new NatsServer(await freePort(), store.path, store.cleanup);
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.#log;
  }

  /** (Re)starts it on the same port and store; resolves once it accepts clients. */
  async restart(): Promise<void> {
    const child = spawn(NATS_SERVER, ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.#store], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.#log += chunk));
    await waitFor(() => (/Server is ready/.test(this.#log.slice(this.#log.lastIndexOf('Starting nats-server'))) ? true : child.exitCode !== null ? Promise.reject(new Error(`nats-server exited: ${this.#log}`)) : null), {
      what: 'nats-server to be ready',
      timeoutMs: 20_000,
      intervalMs: 20,
    });
  }

  /** Kills it as a crash would (SIGKILL) and waits for it to be gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    await this.kill();
    await this.#cleanup();
  }
}
