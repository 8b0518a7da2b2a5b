/**
 * Masking: bash runs where protected files are empty. `unshare` (util-linux) makes a private
 * mount namespace (inside a user namespace when we are not root) in which a small script
 * bind-mounts an empty read-only file over every protected file of the checkout and an empty
 * read-only tmpfs over the user's key directories. The script then `exec`s a second `unshare`
 * into a new user, mount and PID namespace, with /proc mounted afresh, where the command runs:
 *
 * - mounts made in a more privileged namespace are locked in the less privileged one, so the
 *   command cannot unmount a mask (even as root, which becomes root of a child user namespace);
 * - the new PID namespace and /proc hide every process outside, so `/proc/<pid>/root/…` of the
 *   executor itself, which sees the unmasked tree, is out of reach;
 * - killing the process group kills the namespace's init, and with it every process the command
 *   left behind, daemons included.
 *
 * Whether this works here is probed once per process; where it does not, bash refuses to run
 * at all (never unmasked). Limits: docs/EXECUTOR-FLOOR.md.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelCommandEnvironment, type ChildEnv } from '../platform/child-env.js';
import { insidePath } from '../platform/confine.js';

/** What a failing mask step prints before exiting 125, so a mask failure is told from the command's own. */
export const MASK_FAILURE_MARK = 'majordomus-floor: ';
export const MASK_FAILURE_EXIT = 125;

/** Directories of the user's keys, covered by an empty tmpfs when they exist (relative to the home directory). */
export const MASKED_HOME_DIRECTORIES: readonly string[] = ['.ssh', '.aws', '.gnupg', '.config/gcloud'];

/**
 * Run by the first `unshare` as `bash -c STAGE_ONE majordomus-floor EMPTY FILES HOMES UID GID COMMAND`.
 * FILES and HOMES list paths separated by NUL (any byte but NUL may be in a name).
 */
const STAGE_ONE = `
set -u
fail() { printf '%s%s\\n' '${MASK_FAILURE_MARK}' "$1" >&2; exit ${MASK_FAILURE_EXIT}; }
while IFS= read -r -d '' path; do
  problem=$(mount --bind -o ro "$1" "$path" 2>&1) || fail "cannot mask $path: $problem"
done < "$2"
while IFS= read -r -d '' path; do
  problem=$(mount -t tmpfs -o ro,size=4k,mode=0500 majordomus-floor "$path" 2>&1) || fail "cannot mask $path: $problem"
done < "$3"
exec unshare --map-user="$4" --map-group="$5" --mount --pid --fork --kill-child --mount-proc /bin/bash -c "$6"
`;

export interface MaskedCommand {
  command: string;
  cwd: string;
  env: ChildEnv;
  /** Files to show empty (absolute paths, regular files). */
  files: readonly string[];
  /** Directories to show empty (absolute paths). */
  directories: readonly string[];
}

export interface MaskedProcess {
  child: ChildProcess;
  /** Removes the run's scratch files; call once the child has closed. */
  cleanup(): Promise<void>;
}

/** `[path]` when it is an existing directory (a mount point must exist), else `[]`. */
export async function existingDirectory(path: string): Promise<string[]> {
  if (path === '') return [];
  return (await stat(path).then((info) => info.isDirectory(), () => false)) ? [path] : [];
}

/** The user's key directories that exist and do not hold the checkout (masking those would hide it). */
export async function homeDirectoriesToMask(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of MASKED_HOME_DIRECTORIES) {
    try {
      const path = await realpath(join(homedir(), name));
      if ((await stat(path)).isDirectory() && insidePath(path, root) === undefined) found.push(path);
    } catch {
      // Absent: nothing to cover.
    }
  }
  return found;
}

/** Starts `command` under the masks, in its own process group (kill `-pid` to end all of it). */
export async function spawnMasked(run: MaskedCommand): Promise<MaskedProcess> {
  const scratch = await mkdtemp(join(tmpdir(), 'majordomus-floor-'));
  const empty = join(scratch, 'empty');
  const files = join(scratch, 'files');
  const directories = join(scratch, 'directories');
  await writeFile(empty, '');
  await chmod(empty, 0o444);
  await writeFile(files, run.files.map((path) => `${path}\0`).join(''));
  await writeFile(directories, run.directories.map((path) => `${path}\0`).join(''));
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  // As root the first namespace needs no user namespace; otherwise we become its root to mount.
  const userNamespace = uid === 0 ? [] : ['--user', '--map-root-user'];
  const args = [...userNamespace, '--mount', '--propagation', 'private', '/bin/bash', '-c', STAGE_ONE, 'majordomus-floor', empty, files, directories, String(uid), String(gid), run.command];
  const child = spawn('unshare', args, { cwd: run.cwd, env: run.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, cleanup: () => rm(scratch, { recursive: true, force: true }) };
}

export type MaskingSupport = { available: true } | { available: false; reason: string };

let probe: Promise<MaskingSupport> | undefined;

const PROBE_TIMEOUT_MS = 30_000;

async function runProbe(): Promise<MaskingSupport> {
  const scratch = await mkdtemp(join(tmpdir(), 'majordomus-floor-probe-'));
  try {
    const secret = join(scratch, 'probe-secret');
    const keys = join(scratch, 'probe-keys');
    await writeFile(secret, 'majordomus floor probe');
    await mkdir(keys);
    await writeFile(join(keys, 'key'), 'majordomus floor probe');
    const command = 'cat probe-secret && ls -A probe-keys && echo probe-done';
    const { child, cleanup } = await spawnMasked({ command, cwd: scratch, env: modelCommandEnvironment(), files: [secret], directories: [keys] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => killGroup(child), PROBE_TIMEOUT_MS);
    const result = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, error }));
      child.once('close', (code) => resolve({ code }));
    });
    clearTimeout(timer);
    await cleanup();
    if (result.error) {
      const missing = (result.error as NodeJS.ErrnoException).code === 'ENOENT';
      return { available: false, reason: missing ? 'unshare (util-linux) is not installed' : result.error.message };
    }
    if (result.code === 0 && output === 'probe-done\n') return { available: true };
    const said = output.trim().split('\n').filter(Boolean).slice(0, 3).join(' / ');
    return { available: false, reason: `a test of the masks failed (exit ${result.code ?? 'killed'}${said === '' ? '' : `: ${said}`}); user namespaces may be disabled` };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Whether masking works in this process's environment; probed once and remembered. */
export function probeMasking(): Promise<MaskingSupport> {
  probe ??= runProbe().catch((error: unknown) => ({ available: false as const, reason: (error as Error).message }));
  return probe;
}

/** Kills a masked command's whole process group (and so its PID namespace). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
