/**
 * `majordomus serve` as a user runs it: the built executable in a fixture, stdin a pipe (its EOF
 * stops the server), started on port 0 unless told otherwise. `startServe` resolves once stderr
 * names the bound URL. Also raw HTTP over `node:http`, for what `fetch` cannot send (a Host
 * header, an oversize or chunked body, HEAD with the framing visible, a kept-alive socket).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { spawnCli, type CliProcess } from './cli.js';
import { withTimeout } from './wait.js';

/** Bound on how long a server may take to name its URL (a loaded two-core machine is slow). */
export const SERVE_START_TIMEOUT_MS = 30_000;

export interface ServeOptions {
  /** The fixture root. */
  cwd: string;
  /** Options after `serve`; defaults to `['--port', '0']`. */
  args?: readonly string[];
  /** Options before `serve` (`--discovery`, `--strict`, …). */
  globalArgs?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
  /** The executable (a package copy's `dist/src/cli/main.js`) and the Node.js binary, when not ours. */
  main?: string;
  node?: string;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  /** `http://HOST:PORT`, as the server logged it. */
  readonly url: string;
  /** `http://127.0.0.1:PORT`: where a test reaches it whatever host it bound. */
  readonly loopbackUrl: string;
  readonly port: number;
  /** The lease's bearer token (read from `<cwd>/.ai/local/state/mcp/server.json`), or '' without one. */
  readonly token: string;
  /** `{Authorization: 'Bearer <token>'}`, for requests that need the token. */
  readonly auth: Record<string, string>;
  readonly child: ChildProcessWithoutNullStreams;
  readonly cli: CliProcess;
  stderr(): string;
  readonly exited: Promise<ExitStatus>;
  /**
   * Ends stdin and waits for the exit (then SIGTERM, then SIGKILL, so nothing is ever left
   * behind). Answers how the process ended. Safe to call twice.
   */
  stop(graceMs?: number): Promise<ExitStatus>;
}

const SERVING = /serving (http:\/\/(\[[^\]]+\]|[^\s:/]+):(\d+))/;

/** Starts `serve` and waits (bounded) for the `serving http://…` line on stderr. */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const args = [...(options.globalArgs ?? []), 'serve', ...(options.args ?? ['--port', '0'])];
  const cli = spawnCli(args, {
    cwd: options.cwd,
    ...(options.env ? { env: options.env } : {}),
    ...(options.main ? { main: options.main } : {}),
    ...(options.node ? { node: options.node } : {}),
  });
  const timeoutMs = options.timeoutMs ?? SERVE_START_TIMEOUT_MS;
  const stop = async (graceMs = 15_000): Promise<ExitStatus> => {
    await cli.stop(graceMs);
    return cli.exited;
  };

  let found: RegExpExecArray | null = null;
  try {
    found = await withTimeout(
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = (): void => {
          const match = SERVING.exec(cli.stderr());
          if (match) {
            cli.child.stderr.off('data', onData);
            resolve(match);
          }
        };
        // Our listener runs after the one of spawnCli that accumulates the text.
        const onData = (): void => check();
        cli.child.stderr.on('data', onData);
        cli.exited.then(
          (status) => reject(new Error(`serve exited (${status.code ?? status.signal}) before serving`)),
          reject,
        );
        check();
      }),
      timeoutMs,
      `majordomus ${args.join(' ')} to log its URL`,
    );
  } catch (error) {
    await cli.stop(2_000);
    throw new Error(`${(error as Error).message}\nstderr:\n${cli.stderr()}`);
  }
  const port = Number(found[3]);
  const token = leaseToken(options.cwd);
  return {
    url: found[1] as string,
    loopbackUrl: `http://127.0.0.1:${port}`,
    port,
    token,
    auth: { Authorization: `Bearer ${token}` },
    child: cli.child,
    cli,
    stderr: () => cli.stderr(),
    exited: cli.exited,
    stop,
  };
}

/** The token of the lease of the checkout at `root` (default local path), or '' when there is none. */
export function leaseToken(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, '.ai/local/state/mcp/server.json'), 'utf8')) as { token?: string }).token ?? '';
  } catch {
    return '';
  }
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body as text. */
  text: string;
  /** The body parsed as JSON (throws if it is not). */
  json<T = any>(): T;
}

export interface RawRequestOptions {
  port: number;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** Sent as given (with a Content-Length unless `chunked`). */
  body?: string | Buffer;
  /** Send the body with `Transfer-Encoding: chunked`, in chunks of this many bytes. */
  chunked?: number;
  agent?: Agent | false;
  timeoutMs?: number;
}

/**
 * One request over `node:http` to 127.0.0.1. A server that answers before reading the whole body
 * (413) may reset the connection while we still write: the answer wins, write errors are ignored.
 */
export function rawRequest(options: RawRequestOptions): Promise<RawResponse> {
  const { port, method = 'GET', path = '/', body, chunked, timeoutMs = 20_000 } = options;
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (body !== undefined && chunked === undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
  if (chunked !== undefined) headers['Transfer-Encoding'] = 'chunked';
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers, agent: options.agent ?? false, setHost: !('Host' in headers || 'host' in headers) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', fail);
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: bytes,
            text,
            json: () => JSON.parse(text),
          });
        });
      },
    );
    const timer = setTimeout(() => {
      fail(new Error(`timed out after ${timeoutMs} ms: ${method} ${path}`));
      req.destroy();
    }, timeoutMs);
    function fail(error: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
    }
    req.on('error', (error: NodeJS.ErrnoException) => {
      // EPIPE/ECONNRESET while writing a body the server already refused: wait for the answer.
      if (body !== undefined && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) {
        setTimeout(() => fail(error), 2_000).unref();
        return;
      }
      fail(error);
    });
    if (body === undefined) {
      req.end();
      return;
    }
    if (chunked === undefined) {
      req.end(body);
      return;
    }
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    let offset = 0;
    const pump = (): void => {
      while (offset < bytes.length) {
        const next = bytes.subarray(offset, offset + chunked);
        offset += next.length;
        if (!req.write(next)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}
