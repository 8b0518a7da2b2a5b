/**
 * The one git runner (src/platform/git.ts), with the real git. Covers:
 * - it answers git's stdout as text or as bytes, and hands git its input on stdin;
 * - git runs with the environment child-env.ts gives it: no optional locks, no prompt;
 * - each failure is a GitFailed saying which: git missing from PATH, a directory that does not
 *   exist, a non-zero exit (with git's own words and its code), output over the bound, a run over
 *   its time; the message names the command and the directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitFailed, runGit, runGitBytes, type GitFailure } from '../../../src/platform/git.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'majordomus-git-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function failure(run: Promise<unknown>): Promise<GitFailed> {
  const error = await run.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GitFailed);
  return error as GitFailed;
}

describe('a run that works', () => {
  it('answers stdout as text, and as bytes', async () => {
    await runGit(dir, ['init', '-q']);
    expect((await runGit(dir, ['rev-parse', '--is-inside-work-tree'])).trim()).toBe('true');
    const bytes = await runGitBytes(dir, ['rev-parse', '--is-inside-work-tree']);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.toString('utf8')).toBe('true\n');
  });

  it('hands git its input on stdin', async () => {
    const hash = (await runGit(dir, ['hash-object', '--stdin'], { input: 'hello\n' })).trim();
    expect(hash).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('runs git without optional locks and without a prompt', async () => {
    const env = await runGit(dir, ['-c', 'alias.env=!env', 'env']);
    expect(env).toMatch(/^GIT_OPTIONAL_LOCKS=0$/m);
    expect(env).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
  });
});

describe('a run that fails', () => {
  const expectFailure = (error: GitFailed, kind: GitFailure, args: string, why: string | RegExp): void => {
    expect(error.failure).toBe(kind);
    if (typeof why === 'string') expect(error.why).toBe(why);
    else expect(error.why).toMatch(why);
    expect(error.message).toBe(`git ${args} failed in ${dir}: ${error.why}`);
  };

  it('says git is not installed when it is not on PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = dir;
    try {
      expectFailure(await failure(runGit(dir, ['status'])), 'not-installed', 'status', 'git is not installed or not on PATH');
    } finally {
      process.env.PATH = path;
    }
  });

  it('says the directory is missing rather than git', async () => {
    const missing = join(dir, 'gone');
    const error = await failure(runGit(missing, ['status']));
    expect(error.failure).toBe('no-directory');
    expect(error.message).toBe(`git status failed in ${missing}: ${missing} is not a directory`);
  });

  it('carries git\'s own words and its exit code', async () => {
    const error = await failure(runGit(dir, ['rev-parse', '--show-toplevel']));
    expectFailure(error, 'exit', 'rev-parse --show-toplevel', /not a git repository/);
    expect(error.exitCode).toBe(128);
  });

  it('stops reading past the bound', async () => {
    expectFailure(await failure(runGit(dir, ['--version'], { maxBytes: 4 })), 'output-too-large', '--version', 'its output exceeded 4 bytes');
  });

  it('stops a run that takes too long', async () => {
    // The alias's sleep holds none of git's pipes: once git is killed the run ends.
    const args = ['-c', 'alias.wait=!exec sleep 3 </dev/null >/dev/null 2>&1', 'wait'];
    expectFailure(await failure(runGit(dir, args, { timeoutMs: 200 })), 'timeout', args.join(' '), 'it did not finish within 200 ms');
  });
});
