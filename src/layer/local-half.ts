/**
 * The local half (`local.path`) is the one place majordomus writes to: the lease lives there.
 * The manifest schema has already refused a path leaving the root, inside the repo half or in
 * `.git`; what remains needs the file system and git, and is checked before anything is written:
 *
 * - every part of it that exists is a real directory inside the root — `mkdir -p` follows links,
 *   so `.ai/local -> /elsewhere` would put the lease outside the checkout;
 * - git tracks nothing below it — state written there would show up as changes to the tree.
 *
 * Free of heavy imports: the election calls it before its first write.
 */
import { join } from 'node:path';
import { MajordomusError } from '../platform/errors.js';
import { GitFailed, runGit } from '../platform/git.js';
import { log } from '../platform/log.js';
import { MANIFEST_PATH } from './identity.js';
import { RealDirectories } from '../platform/confine.js';

/** Far above any real listing; the first name is all that is used. */
const GIT_MAX_BUFFER = 16 * 1024 * 1024;

function refuse(root: string, why: string): MajordomusError {
  return new MajordomusError('MAJ_MANIFEST_INVALID', `${join(root, MANIFEST_PATH)}: invalid manifest: local.path: ${why}`);
}

/** The first file git tracks below `localPath`, or undefined (also when git cannot answer). */
async function firstTracked(root: string, localPath: string): Promise<string | undefined> {
  let stdout: string;
  try {
    // Reading the index never takes a lock or refreshes it (src/platform/git.ts).
    stdout = await runGit(root, ['-c', 'core.quotepath=off', '--literal-pathspecs', 'ls-files', '-z', '--cached', '--', localPath], { maxBytes: GIT_MAX_BUFFER });
  } catch (error) {
    // Not a work tree, or no git: nothing can be tracked, so nothing to refuse.
    log.debug(`not checking whether git tracks ${localPath}: ${error instanceof GitFailed ? error.why : String(error)}`);
    return undefined;
  }
  const first = stdout.split('\0')[0];
  return first === '' ? undefined : first;
}

/**
 * Refuses (MAJ_MANIFEST_INVALID, naming the manifest and `local.path`) a local half reached
 * through a link, or holding a file git tracks. `localPath` is the manifest's
 * validated, normalised `local.path`.
 */
export async function verifyLocalHalf(root: string, localPath: string): Promise<void> {
  const verdict = await new RealDirectories(root).check(localPath);
  if (verdict.kind === 'symlink') {
    throw refuse(root, `${verdict.component} is a symbolic link to ${verdict.target}; the local half must be a real directory inside the root (links are never followed)`);
  }
  // A regular file in the way is not a breach: nothing can be written there, so the lease cannot
  // be created and the client is served alone, saying why (SPEC §6, degraded).
  const tracked = await firstTracked(root, localPath);
  if (tracked !== undefined) {
    throw refuse(
      root,
      `${tracked} is tracked by git; the local half is written to and must hold no tracked file (git rm -r --cached -- ${localPath}, then ignore it)`,
    );
  }
}
