/**
 * The one way the guard runs git: in a directory, with the environment it was given (inside a
 * hook that carries `GIT_INDEX_FILE`, which `git commit -a` and `git commit <paths>` point at a
 * temporary index), never taking optional locks, and failing with what git said.
 */
import { execFile } from 'node:child_process';

/** git failed, or is not installed; the message says which and what git printed. */
export class GitFailed extends Error {
  override name = 'GitFailed';
}

const MAX_BUFFER = 256 * 1024 * 1024;

/** Runs `git args` in `cwd`; answers stdout. `input` is written to its stdin. */
export function runGit(cwd: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      { cwd, encoding: 'utf8', maxBuffer: MAX_BUFFER, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' }, windowsHide: true },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout);
          return;
        }
        const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'git is not installed or not on PATH' : stderr.trim() || error.message;
        reject(new GitFailed(`git ${args.join(' ')} failed in ${cwd}: ${why}`));
      },
    );
    // A git that exits before reading its input must not crash us with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}
