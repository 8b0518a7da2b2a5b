/**
 * The paths a commit or a push touches, relative to the repository's top level with `/`
 * separators (as git prints them). A rename or a copy touches both its paths: the old one is
 * gone, the new one written, and either may be claimed. Deletions touch their path too.
 */
import { runGit } from '../platform/git.js';

/** `-z --name-status` output: a status, then one path, or two for a rename or a copy. */
export function parseNameStatus(output: string): string[] {
  const fields = output.split('\0');
  const paths: string[] = [];
  for (let index = 0; index < fields.length; ) {
    const status = fields[index] as string;
    index += 1;
    if (status === '') continue;
    // `R100`/`C75` carry two paths; a merge's combined status (`MR`, one letter per parent)
    // names only the path in the merge.
    const count = /^[RC]\d*$/.test(status) ? 2 : 1;
    for (let taken = 0; taken < count && index < fields.length; taken += 1, index += 1) {
      const path = fields[index] as string;
      if (path !== '') paths.push(path);
    }
  }
  return paths;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort();
}

/** What `git commit` is about to record: the index against HEAD (against nothing before the first commit). */
export async function stagedPaths(cwd: string): Promise<string[]> {
  return unique(parseNameStatus(await runGit(cwd, ['-c', 'core.quotepath=off', 'diff', '--cached', '--name-status', '-z', '-M'])));
}

/** One line of what git hands a pre-push hook on stdin. */
export interface RefUpdate {
  localRef: string;
  localSha: string;
  remoteRef: string;
  remoteSha: string;
}

const ZERO = /^0+$/;

/** The `<local ref> <local sha> <remote ref> <remote sha>` lines of a pre-push hook's stdin. */
export function parsePushInput(input: string): RefUpdate[] {
  return input.split('\n').flatMap((line) => {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 4) return [];
    const [localRef, localSha, remoteRef, remoteSha] = fields as [string, string, string, string];
    return [{ localRef, localSha, remoteRef, remoteSha }];
  });
}

/**
 * The commits an update sends: none for a deleted ref; for a new remote ref those no
 * remote-tracking ref has; otherwise `<remote>..<local>` — or, when the remote's commit is not
 * here (someone else pushed to it), those no remote-tracking ref has.
 */
export async function commitsOf(cwd: string, update: RefUpdate): Promise<string[]> {
  if (ZERO.test(update.localSha)) return [];
  const notOnRemotes = (): Promise<string> => runGit(cwd, ['rev-list', update.localSha, '--not', '--remotes']);
  let listed: string;
  if (ZERO.test(update.remoteSha)) listed = await notOnRemotes();
  else listed = await runGit(cwd, ['rev-list', `${update.remoteSha}..${update.localSha}`]).catch(notOnRemotes);
  return listed.split('\n').filter((line) => line !== '');
}

/**
 * The paths the commits change, each against its parent (a root commit against nothing); a merge
 * contributes the paths its resolution changed beyond every parent (`--cc`), its parents' own
 * commits being in the list themselves.
 */
export async function pathsOfCommits(cwd: string, commits: readonly string[]): Promise<string[]> {
  if (commits.length === 0) return [];
  const output = await runGit(
    cwd,
    ['-c', 'core.quotepath=off', 'diff-tree', '--stdin', '-r', '-z', '--no-commit-id', '--name-status', '-M', '--root', '--cc'],
    { input: `${commits.join('\n')}\n` },
  );
  return unique(parseNameStatus(output));
}

/** Every path the pushed updates touch. */
export async function pushedPaths(cwd: string, input: string): Promise<string[]> {
  const commits = new Set<string>();
  for (const update of parsePushInput(input)) for (const commit of await commitsOf(cwd, update)) commits.add(commit);
  return pathsOfCommits(cwd, [...commits]);
}
