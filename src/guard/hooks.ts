/**
 * Installs, removes and reports the git guard's hooks (`pre-commit`, `pre-push`) in the hooks
 * directory git itself uses (`git rev-parse --git-path hooks`: `core.hooksPath` and linked
 * worktrees are respected).
 *
 * A user's own hook is never overwritten or deleted: install moves it to `<name>.user` and our
 * hook runs it first, with the same arguments and stdin; uninstall puts it back. The move is a
 * hard link followed by an atomic replace, so at no moment is there no hook, and an existing
 * `<name>.user` is never replaced (the link fails instead). Our hook is recognised by its second
 * line, `# majordomus git guard`.
 */
import { constants } from 'node:fs';
import { access, chmod, link, lstat, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { CapabilityError, errorMessage } from '../platform/errors.js';
import { GitFailed, runGit } from '../platform/git.js';

export const GUARD_HOOKS = ['pre-commit', 'pre-push'] as const;
export type GuardHook = (typeof GUARD_HOOKS)[number];

/** What a hook does on a conflict unless `MAJORDOMUS_GUARD` says otherwise for one command. */
export const GUARD_MODES = ['refuse', 'warn'] as const;
export type GuardMode = (typeof GUARD_MODES)[number];

export const HOOK_MARKER = '# majordomus git guard';

/** Our hook is small; anything bigger at a hook's path is somebody else's. */
const MAX_OURS_BYTES = 64 * 1024;

/** Absolute paths written into the hook at install time. */
export interface HookLauncher {
  /** The node executable (`process.execPath`). */
  node: string;
  /** The built CLI (`<package root>/dist/src/cli/main.js`). */
  main: string;
}

export interface GitLayout {
  /** Absolute path of the hooks directory git runs hooks from. */
  hooksDirectory: string;
  /** The checkout's root relative to the work tree's top level ('' when they are the same). */
  rootFromTop: string;
}

/** Where git keeps this checkout's hooks; refused when the root is not in a git work tree. */
export async function gitLayout(root: string): Promise<GitLayout> {
  let output: string;
  try {
    // --git-path answers relative to the working directory unless it is absolute (core.hooksPath).
    output = await runGit(root, ['rev-parse', '--git-path', 'hooks', '--show-toplevel']);
  } catch (error) {
    const why = error instanceof GitFailed ? error.message : errorMessage(error);
    throw new CapabilityError('refused', `the checkout is not a git work tree, so it has no git hooks (${why})`);
  }
  const [hooks, top] = output.split('\n');
  if (!hooks || !top) throw new CapabilityError('refused', 'the checkout is not a git work tree, so it has no git hooks');
  return { hooksDirectory: resolve(root, hooks), rootFromTop: relative(top, root).split('\\').join('/') };
}

/** A word for `sh` in single quotes. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function shellUnquote(text: string): string {
  return text.slice(1, -1).replaceAll("'\\''", "'");
}

/**
 * The hook's script. It runs the user's hook first (a failure ends the commit with its exit
 * code), then `guard run`; a launcher that has gone (the package was moved or removed) is said
 * once on stderr and lets the command through.
 */
export function hookScript(hook: GuardHook, mode: GuardMode, launcher: HookLauncher, rootFromTop: string): string {
  const push = hook === 'pre-push';
  // pre-push gets its ref updates on stdin: read once, handed to both.
  const feed = 'if [ -n "$input" ]; then printf \'%s\\n\' "$input"; fi | ';
  const repo = rootFromTop === '' ? '' : ` --repo ${shellQuote(rootFromTop)}`;
  return [
    '#!/bin/sh',
    HOOK_MARKER,
    '# Written by `majordomus guard install`; `majordomus guard uninstall` removes it and puts back',
    `# the hook that was here before (kept beside it as ${hook}.user, and run first).`,
    '# One command only: MAJORDOMUS_GUARD=warn (warn, do not refuse) or MAJORDOMUS_GUARD=off (skip).',
    `: "\${MAJORDOMUS_GUARD:=${mode}}"`,
    'export MAJORDOMUS_GUARD',
    ...(push ? ['input=$(cat)'] : []),
    `user_hook="$(dirname -- "$0")/${hook}.user"`,
    'if [ -x "$user_hook" ]; then',
    `  ${push ? feed : ''}"$user_hook" "$@" || exit $?`,
    'fi',
    `node=${shellQuote(launcher.node)}`,
    `launcher=${shellQuote(launcher.main)}`,
    'if [ ! -f "$launcher" ] || [ ! -x "$node" ]; then',
    '  echo "majordomus git guard: $launcher or $node is gone, nothing was checked (run majordomus guard install again, or uninstall)" >&2',
    '  exit 0',
    'fi',
    `${push ? feed : 'exec '}"$node" "$launcher" guard run ${hook}${repo} -- "$@"`,
    '',
  ].join('\n');
}

export type HookStateName = 'absent' | 'ours' | 'foreign';

export interface HookState {
  hook: GuardHook;
  state: HookStateName;
  /** The mode our hook defaults to; null unless ours. */
  mode: GuardMode | null;
  /** A user's hook (`<name>.user`, executable) runs before ours. */
  chained: boolean;
  /** Whether the node and launcher our hook names still exist; null unless ours. */
  launcher_found: boolean | null;
}

interface Inspected {
  state: HookStateName;
  text: string;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** An executable file (through a link): what git, and our hook, would run. */
async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** What is at a hook's path: nothing, our script, or anything else (a link counts as foreign). */
async function inspect(path: string): Promise<Inspected> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return { state: 'absent', text: '' };
  }
  if (!info.isFile() || info.size > MAX_OURS_BYTES) return { state: 'foreign', text: '' };
  const text = await readFile(path, 'utf8');
  return { state: text.split('\n')[1] === HOOK_MARKER ? 'ours' : 'foreign', text };
}

function modeOf(text: string): GuardMode | null {
  const found = /^: "\$\{MAJORDOMUS_GUARD:=(refuse|warn)\}"$/m.exec(text);
  return found ? (found[1] as GuardMode) : null;
}

async function launcherFound(text: string): Promise<boolean> {
  const node = /^node=('.*')$/m.exec(text);
  const main = /^launcher=('.*')$/m.exec(text);
  if (!node || !main) return false;
  return (await executable(shellUnquote(node[1] as string))) && (await exists(shellUnquote(main[1] as string)));
}

async function stateOf(directory: string, hook: GuardHook): Promise<HookState> {
  const { state, text } = await inspect(join(directory, hook));
  return {
    hook,
    state,
    mode: state === 'ours' ? modeOf(text) : null,
    chained: await executable(join(directory, `${hook}.user`)),
    launcher_found: state === 'ours' ? await launcherFound(text) : null,
  };
}

export interface GuardStatus {
  /** The hooks directory, relative to the checkout's root. */
  directory: string;
  hooks: HookState[];
}

function shown(root: string, directory: string): string {
  return relative(root, directory).split('\\').join('/') || '.';
}

/** Each hook: absent, ours (with its mode) or foreign, and whether a user's hook is chained. */
export async function guardStatus(root: string): Promise<GuardStatus> {
  const { hooksDirectory } = await gitLayout(root);
  const hooks: HookState[] = [];
  for (const hook of GUARD_HOOKS) hooks.push(await stateOf(hooksDirectory, hook));
  return { directory: shown(root, hooksDirectory), hooks };
}

export interface InstallOptions {
  mode: GuardMode;
  hooks: readonly GuardHook[];
  launcher: HookLauncher;
}

export interface InstallResult extends GuardStatus {
  /** The hooks whose user's hook this install moved to `<name>.user`. */
  moved: GuardHook[];
}

/** Moves `from` to `to`, never replacing what is at `to` (false then). */
async function moveAside(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links: the check above the rename is the best there is.
    if (await exists(to)) return false;
    await rename(from, to);
    return true;
  }
  await unlink(from);
  return true;
}

async function writeHook(path: string, text: string): Promise<void> {
  const temp = `${path}.majordomus-${process.pid}.tmp`;
  try {
    await writeFile(temp, text, { mode: 0o755 });
    await chmod(temp, 0o755); // whatever the umask
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

function describeRefusal(hook: GuardHook): string {
  return `${hook}: a hook of your own is in place and ${hook}.user exists too, so installing would lose one of them; merge or move them by hand, then install again`;
}

/**
 * Installs our hooks (again: idempotent, the mode and paths rewritten). A user's hook is moved to
 * `<name>.user` and chained. All or nothing: any hook that cannot be installed safely refuses the
 * whole install before anything is changed.
 */
export async function installHooks(root: string, options: InstallOptions): Promise<InstallResult> {
  if (!(await exists(options.launcher.main))) {
    throw new CapabilityError('refused', `the majordomus executable ${options.launcher.main} is missing (build the package first), so no hook could run it`);
  }
  const { hooksDirectory, rootFromTop } = await gitLayout(root);
  const hooks = GUARD_HOOKS.filter((hook) => options.hooks.includes(hook));
  const plans: Array<{ hook: GuardHook; foreign: boolean }> = [];
  const refusals: string[] = [];
  for (const hook of hooks) {
    const { state } = await inspect(join(hooksDirectory, hook));
    if (state === 'foreign' && (await exists(join(hooksDirectory, `${hook}.user`)))) refusals.push(describeRefusal(hook));
    plans.push({ hook, foreign: state === 'foreign' });
  }
  if (refusals.length > 0) throw new CapabilityError('refused', `the git guard was not installed: ${refusals.join('; ')}`);

  await mkdir(hooksDirectory, { recursive: true });
  const moved: GuardHook[] = [];
  for (const { hook, foreign } of plans) {
    const path = join(hooksDirectory, hook);
    if (foreign) {
      if (!(await moveAside(path, `${path}.user`))) throw new CapabilityError('refused', `the git guard was not installed for ${hook}: ${describeRefusal(hook)}`);
      moved.push(hook);
    }
    await writeHook(path, hookScript(hook, options.mode, options.launcher, rootFromTop));
  }
  return { ...(await guardStatus(root)), moved };
}

export interface UninstallResult extends GuardStatus {
  /** The hooks of ours that were removed. */
  removed: GuardHook[];
  /** The hooks whose user's hook was put back from `<name>.user`. */
  restored: GuardHook[];
}

/**
 * Removes our hooks and puts each user's hook back in its place. A hook that is not ours is left
 * alone (with its `.user` beside it, if any); a `.user` whose place is empty is put back.
 */
export async function uninstallHooks(root: string): Promise<UninstallResult> {
  const { hooksDirectory } = await gitLayout(root);
  const removed: GuardHook[] = [];
  const restored: GuardHook[] = [];
  for (const hook of GUARD_HOOKS) {
    const path = join(hooksDirectory, hook);
    const user = `${path}.user`;
    const { state } = await inspect(path);
    if (state === 'foreign') continue;
    const hasUser = await exists(user);
    if (state === 'ours') removed.push(hook);
    if (hasUser) {
      await rename(user, path); // replaces ours in one step
      restored.push(hook);
    } else if (state === 'ours') {
      await unlink(path);
    }
  }
  return { ...(await guardStatus(root)), removed, restored };
}
