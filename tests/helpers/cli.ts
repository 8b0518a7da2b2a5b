/**
 * The built executable, run as a user runs it: `node dist/src/cli/main.js …` with real pipes.
 * `runCli` runs a command to completion; `spawnCli` starts a long-lived one (an `mcp` session, a
 * server) whose stdin, stdout lines and stderr the test drives. Both capture stderr.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withoutCoverage } from './coverage-env.js';
import { withTimeout } from './wait.js';

/** The package root, from this file's location (never the working directory). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built executable. */
export const MAIN_JS = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** Generous: a loaded two-core machine starts node slowly. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface CliOptions {
  cwd: string;
  /** Written to stdin, which is then closed. stdin is always closed so nothing waits on it. */
  input?: string;
  /** Added to the environment (a value of `undefined` removes a variable). */
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
  /** The executable to run instead of ours (a package copy's `dist/src/cli/main.js`). */
  main?: string;
  /** The Node.js binary to run it with instead of the tests' own (another runtime: ./node-runtimes.ts). */
  node?: string;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function assertBuilt(main: string): void {
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
}

/**
 * The child's environment: ours, without a log level set by the developer, plus `extra`. A copy of
 * the package (`main` elsewhere) is not measured, so it gets no coverage variable.
 */
export function cliEnv(extra: Readonly<Record<string, string | undefined>> = {}, main: string = MAIN_JS): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = main === MAIN_JS ? { ...process.env } : withoutCoverage(process.env);
  delete env.MAJORDOMUS_LOG;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Runs the executable to completion; a run past the timeout is killed and rejected. */
export async function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const cli = spawnCli(args, options);
  if (options.input !== undefined) cli.child.stdin.write(options.input);
  cli.child.stdin.end();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    const { code, signal } = await withTimeout(cli.exited, timeoutMs, `majordomus ${args.join(' ')}`);
    return { code, signal, stdout: cli.stdout(), stderr: cli.stderr() };
  } catch (error) {
    await cli.stop();
    throw new Error(`${(error as Error).message}\nstderr:\n${cli.stderr()}`);
  }
}

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The complete stdout lines so far. */
  lines(): string[];
  /** Resolves with the first complete stdout line (at index ≥ `from`) matching `predicate`. */
  waitForLine(predicate: (line: string) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** Writes `text` and a newline to stdin. */
  send(text: string): void;
  /** Resolves when the process has exited and its pipes are closed. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes stdin, waits for the exit, then SIGTERM and SIGKILL; safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts the executable with piped stdio. Call `stop()` in `afterEach`. */
export function spawnCli(args: readonly string[], options: Omit<CliOptions, 'input' | 'timeoutMs'>): CliProcess {
  const main = options.main ?? MAIN_JS;
  assertBuilt(main);
  const child = spawn(options.node ?? process.execPath, [main, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env, main),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of waiters) waiter();
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    wake();
  });
  child.stderr.on('data', (chunk: string) => {
    err += chunk;
  });
  // A child that exits early makes our writes fail with EPIPE; the test asserts on the exit instead.
  child.stdin.on('error', () => {});
  child.stdout.on('error', () => {});
  let closed = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', (error) => {
      closed = true;
      reject(error);
      wake();
    });
    child.once('close', (code, signal) => {
      closed = true;
      resolve({ code, signal });
      wake();
    });
  });
  exited.catch(() => {});
  const lines = (): string[] => {
    const all = out.split('\n');
    all.pop(); // the incomplete tail
    return all;
  };

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> => {
    stopping ??= (async () => {
      if (closed) return;
      child.stdin.end();
      const settled = (ms: number): Promise<boolean> =>
        withTimeout(exited, ms, 'exit').then(
          () => true,
          () => false,
        );
      if (await settled(graceMs)) return;
      child.kill('SIGTERM');
      if (await settled(graceMs)) return;
      child.kill('SIGKILL');
      await settled(graceMs);
    })();
    return stopping;
  };

  return {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    lines,
    waitForLine: (predicate, { from = 0, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const found = lines().slice(from).find(predicate);
          if (found !== undefined) {
            finish();
            resolve(found);
          } else if (closed) {
            finish();
            reject(new Error(`the process exited before the line arrived\nstdout:\n${out}\nstderr:\n${err}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for a stdout line\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    send: (text) => {
      child.stdin.write(`${text}\n`);
    },
    exited,
    stop,
  };
}
