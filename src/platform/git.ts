/**
 * The one way to run git: in a directory, with the environment child-env.ts gives git (inside a
 * hook that carries `GIT_INDEX_FILE`, which `git commit -a` and `git commit <paths>` point at a
 * temporary index), never taking optional locks, its output bounded, and failing with a typed
 * error that says what went wrong and what git printed.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { statSync } from 'node:fs';
import { gitEnvironment } from './child-env.js';

/** Why git failed: not installed, no such directory, a non-zero exit, too much output, too long. */
export type GitFailure = 'not-installed' | 'no-directory' | 'exit' | 'output-too-large' | 'timeout';

/** git failed, or is not installed; the message says which and what git printed. */
export class GitFailed extends Error {
  override name = 'GitFailed';
  readonly failure: GitFailure;
  /** The reason alone (git's stderr, or what prevented it from running), without the command. */
  readonly why: string;
  /** git's exit code, when it exited. */
  readonly exitCode: number | null;

  constructor(args: readonly string[], cwd: string, failure: GitFailure, why: string, exitCode: number | null) {
    super(`git ${args.join(' ')} failed in ${cwd}: ${why}`);
    this.failure = failure;
    this.why = why;
    this.exitCode = exitCode;
  }
}

export interface GitOptions {
  /** Written to git's stdin (which is closed either way). */
  input?: string;
  /** The most bytes of stdout read; more fails the run (`output-too-large`). Default 256 MiB. */
  maxBytes?: number;
  /** Killed after this long (`timeout`); default: no limit. */
  timeoutMs?: number;
}

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function failureOf(error: ExecFileException, stderr: string, cwd: string, options: GitOptions): { failure: GitFailure; why: string } {
  // A spawn of a missing executable and a spawn in a missing directory both say ENOENT.
  if (error.code === 'ENOENT') {
    return isDirectory(cwd) ? { failure: 'not-installed', why: 'git is not installed or not on PATH' } : { failure: 'no-directory', why: `${cwd} is not a directory` };
  }
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return { failure: 'output-too-large', why: `its output exceeded ${options.maxBytes ?? DEFAULT_MAX_BYTES} bytes` };
  if (error.killed === true && options.timeoutMs !== undefined) return { failure: 'timeout', why: `it did not finish within ${options.timeoutMs} ms` };
  return { failure: 'exit', why: stderr.trim() || error.message };
}

function run<T extends string | Buffer>(cwd: string, args: readonly string[], options: GitOptions, encoding: 'utf8' | 'buffer'): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      {
        cwd,
        encoding,
        maxBuffer: options.maxBytes ?? DEFAULT_MAX_BYTES,
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
        env: gitEnvironment(),
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout as T);
          return;
        }
        const text = typeof stderr === 'string' ? stderr : new TextDecoder().decode(stderr);
        const { failure, why } = failureOf(error, text, cwd, options);
        reject(new GitFailed(args, cwd, failure, why, typeof error.code === 'number' ? error.code : null));
      },
    );
    // A git that exits before reading its input must not crash us with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** Runs `git args` in `cwd`; answers its stdout as text. */
export function runGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  return run<string>(cwd, args, options, 'utf8');
}

/** Runs `git args` in `cwd`; answers its stdout as bytes (names that may not be UTF-8). */
export function runGitBytes(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  return run<Buffer>(cwd, args, options, 'buffer');
}
