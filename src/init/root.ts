/** Where `init` works: `--repo DIR` as given, or the top of the git work tree around the working directory. */
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MajordomusError, errorMessage } from '../platform/errors.js';
import { GitFailed, runGit } from '../platform/git.js';

export async function initRoot(repo: string | undefined, cwd: string): Promise<string> {
  if (repo !== undefined) {
    const directory = resolve(cwd, repo);
    try {
      if ((await stat(directory)).isDirectory()) return await realpath(directory);
    } catch (error) {
      throw new MajordomusError('MAJ_NOT_A_REPOSITORY', `--repo ${repo}: ${errorMessage(error)}`);
    }
    throw new MajordomusError('MAJ_NOT_A_REPOSITORY', `--repo ${repo}: not a directory`);
  }
  let top: string;
  try {
    top = (await runGit(cwd, ['rev-parse', '--show-toplevel'])).trim();
  } catch (error) {
    const why = error instanceof GitFailed ? error.message : errorMessage(error);
    throw new MajordomusError('MAJ_NOT_A_REPOSITORY', `${cwd} is not inside a git work tree, so there is no repository root to set up (${why}); run init in one, or name the directory with --repo DIR`);
  }
  return realpath(top);
}
