/**
 * Installing, removing and reporting the guard's hooks (src/guard/hooks.ts) in real temporary git
 * repositories, and the hook scripts themselves run by `sh` against a stand-in launcher. Covers:
 * - a fresh install writes both hooks (executable, marked, with the mode) and status reports them;
 *   `hooks` limits which;
 * - a user's hook is moved to `<name>.user` (content and mode kept, a symbolic link too), chained,
 *   and put back by uninstall; re-installing is idempotent (nothing moved twice) and rewrites the
 *   mode; uninstall leaves foreign hooks alone and puts back a `.user` whose place is empty;
 * - `core.hooksPath` (not yet existing) and a linked worktree's shared hooks directory are used;
 * - refusals change nothing: a foreign hook with a `.user` beside it (all or nothing), a checkout
 *   that is not a git work tree, a launcher that does not exist;
 * - the scripts: the user's hook runs first with the same arguments (and, for pre-push, the same
 *   stdin), its failure ends the hook with its exit code; then the launcher gets `guard run <hook>`,
 *   `--repo` for a checkout below the top level, the hook's arguments and stdin, and
 *   `MAJORDOMUS_GUARD` defaulted to the installed mode but overridable; a vanished launcher is one
 *   line on stderr and exit 0.
 */
import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CapabilityError } from '../../../src/platform/errors.js';
import { HOOK_MARKER, guardStatus, installHooks, uninstallHooks, type HookLauncher } from '../../../src/guard/hooks.js';
import { git, makeTempDir } from '../../helpers/fixture-repo.js';

let root: string;
let scratch: string;
const cleanups: Array<() => Promise<void>> = [];
let launcher: HookLauncher;

/** A stand-in for the CLI: records its arguments, stdin and MAJORDOMUS_GUARD, and exits with LAUNCHER_EXIT. */
const RECORDER = `
import { readFileSync, writeFileSync } from 'node:fs';
const stdin = readFileSync(0, 'utf8');
writeFileSync(process.env.RECORD_TO, JSON.stringify({ args: process.argv.slice(2), stdin, guard: process.env.MAJORDOMUS_GUARD, cwd: process.cwd() }));
process.exit(Number(process.env.LAUNCHER_EXIT ?? '0'));
`;

beforeEach(async () => {
  const repo = await makeTempDir('majordomus-hooks-');
  const other = await makeTempDir('majordomus-hooks-scratch-');
  cleanups.push(repo.cleanup, other.cleanup);
  root = repo.path;
  scratch = other.path;
  await git(root, ['init', '-q', '-b', 'main']);
  await writeFile(join(scratch, 'recorder.mjs'), RECORDER);
  launcher = { node: process.execPath, main: join(scratch, 'recorder.mjs') };
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const hooksDir = (): string => join(root, '.git/hooks');

async function userHook(name: string, body: string, directory = hooksDir()): Promise<string> {
  await mkdir(directory, { recursive: true });
  const path = join(directory, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

async function refusal(run: () => Promise<unknown>): Promise<CapabilityError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(CapabilityError);
    expect((error as CapabilityError).code).toBe('refused');
    return error as CapabilityError;
  }
  throw new Error('not refused');
}

interface HookRun {
  code: number | null;
  stderr: string;
  recorded: { args: string[]; stdin: string; guard: string; cwd: string } | null;
}

/** Runs an installed hook as git would: by its path, in the top level, with arguments and stdin. */
async function runHook(name: string, args: string[], stdin = '', env: Record<string, string> = {}, directory = hooksDir()): Promise<HookRun> {
  const record = join(scratch, `record-${Math.random().toString(16).slice(2)}.json`);
  return new Promise((resolve) => {
    const child = execFile(join(directory, name), args, { cwd: root, env: { ...process.env, MAJORDOMUS_GUARD: '', RECORD_TO: record, ...env } }, async (error, _stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      const recorded = await readFile(record, 'utf8').then((text) => JSON.parse(text) as HookRun['recorded'], () => null);
      resolve({ code, stderr, recorded });
    });
    child.stdin?.end(stdin);
  });
}

describe('install, status and uninstall', () => {
  it('installs both hooks, executable and marked with their mode, and reports them', async () => {
    const installed = await installHooks(root, { mode: 'warn', hooks: ['pre-commit', 'pre-push'], launcher });
    expect(installed.moved).toEqual([]);
    expect(installed.directory).toBe('.git/hooks');
    for (const hook of ['pre-commit', 'pre-push']) {
      const text = await readFile(join(hooksDir(), hook), 'utf8');
      expect(text.split('\n').slice(0, 2)).toEqual(['#!/bin/sh', HOOK_MARKER]);
      expect((await lstat(join(hooksDir(), hook))).mode & 0o111).toBe(0o111);
    }
    expect(await guardStatus(root)).toEqual({
      directory: '.git/hooks',
      hooks: [
        { hook: 'pre-commit', state: 'ours', mode: 'warn', chained: false, launcher_found: true },
        { hook: 'pre-push', state: 'ours', mode: 'warn', chained: false, launcher_found: true },
      ],
    });
  });

  it('installs only the hooks asked for', async () => {
    await installHooks(root, { mode: 'refuse', hooks: ['pre-push'], launcher });
    const status = await guardStatus(root);
    expect(status.hooks.map((h) => [h.hook, h.state])).toEqual([
      ['pre-commit', 'absent'],
      ['pre-push', 'ours'],
    ]);
  });

  it('moves a user hook to <name>.user, keeps it whole, chains it, and puts it back on uninstall', async () => {
    const path = await userHook('pre-commit', 'echo mine');
    const before = await readFile(path, 'utf8');
    expect((await guardStatus(root)).hooks[0]).toMatchObject({ state: 'foreign', chained: false, mode: null, launcher_found: null });

    const installed = await installHooks(root, { mode: 'refuse', hooks: ['pre-commit', 'pre-push'], launcher });
    expect(installed.moved).toEqual(['pre-commit']);
    expect(await readFile(`${path}.user`, 'utf8')).toBe(before);
    expect((await lstat(`${path}.user`)).mode & 0o777).toBe(0o755);
    expect(installed.hooks[0]).toMatchObject({ state: 'ours', chained: true, mode: 'refuse' });

    const removed = await uninstallHooks(root);
    expect(removed.removed).toEqual(['pre-commit', 'pre-push']);
    expect(removed.restored).toEqual(['pre-commit']);
    expect(await readFile(path, 'utf8')).toBe(before);
    await expect(lstat(`${path}.user`)).rejects.toThrow(/ENOENT/);
    expect(removed.hooks.map((h) => h.state)).toEqual(['foreign', 'absent']);
  });

  it('re-installs idempotently: nothing is moved twice and the new mode is written', async () => {
    const path = await userHook('pre-commit', 'echo mine');
    const before = await readFile(path, 'utf8');
    await installHooks(root, { mode: 'refuse', hooks: ['pre-commit', 'pre-push'], launcher });
    const again = await installHooks(root, { mode: 'warn', hooks: ['pre-commit', 'pre-push'], launcher });
    expect(again.moved).toEqual([]);
    expect(again.hooks.map((h) => h.mode)).toEqual(['warn', 'warn']);
    expect(await readFile(`${path}.user`, 'utf8')).toBe(before);
    await uninstallHooks(root);
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('moves a user hook that is a symbolic link as the link itself', async () => {
    const target = await userHook('shared-hook', 'echo linked', scratch);
    await mkdir(hooksDir(), { recursive: true });
    await symlink(target, join(hooksDir(), 'pre-push'));
    const installed = await installHooks(root, { mode: 'refuse', hooks: ['pre-push'], launcher });
    expect(installed.moved).toEqual(['pre-push']);
    expect(await readlink(join(hooksDir(), 'pre-push.user'))).toBe(target);
    expect(installed.hooks[1]).toMatchObject({ state: 'ours', chained: true });
    await uninstallHooks(root);
    expect(await readlink(join(hooksDir(), 'pre-push'))).toBe(target);
  });

  it('refuses a foreign hook with a .user beside it, and changes nothing (not even the other hook)', async () => {
    const path = await userHook('pre-push', 'echo current');
    await userHook('pre-push.user', 'echo older');
    const error = await refusal(() => installHooks(root, { mode: 'refuse', hooks: ['pre-commit', 'pre-push'], launcher }));
    expect(error.message).toContain('pre-push: a hook of your own is in place and pre-push.user exists too');
    expect(await readFile(path, 'utf8')).toContain('echo current');
    expect(await readFile(`${path}.user`, 'utf8')).toContain('echo older');
    expect((await guardStatus(root)).hooks.map((h) => h.state)).toEqual(['absent', 'foreign']);
  });

  it('leaves a foreign hook alone on uninstall and puts back a .user whose place is empty', async () => {
    await userHook('pre-commit', 'echo someone else');
    await userHook('pre-push.user', 'echo mine');
    const removed = await uninstallHooks(root);
    expect(removed.removed).toEqual([]);
    expect(removed.restored).toEqual(['pre-push']);
    expect(await readFile(join(hooksDir(), 'pre-commit'), 'utf8')).toContain('someone else');
    expect(await readFile(join(hooksDir(), 'pre-push'), 'utf8')).toContain('echo mine');
  });

  it('uses core.hooksPath, creating the directory when it does not exist yet', async () => {
    await git(root, ['config', 'core.hooksPath', 'tools/hooks']);
    const installed = await installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher });
    expect(installed.directory).toBe('tools/hooks');
    expect(await readFile(join(root, 'tools/hooks/pre-commit'), 'utf8')).toContain(HOOK_MARKER);
    await expect(lstat(join(hooksDir(), 'pre-commit'))).rejects.toThrow(/ENOENT/);
  });

  it('uses the shared hooks directory from a linked worktree', async () => {
    await writeFile(join(root, 'a.txt'), 'a\n');
    await git(root, ['add', '-A']);
    await git(root, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base']);
    const worktree = join(scratch, 'wt');
    await git(root, ['worktree', 'add', '-q', worktree]);
    const installed = await installHooks(worktree, { mode: 'refuse', hooks: ['pre-commit'], launcher });
    expect(installed.directory).toBe('../../' + root.split('/').slice(-1)[0] + '/.git/hooks');
    expect(await readFile(join(hooksDir(), 'pre-commit'), 'utf8')).toContain(HOOK_MARKER);
  });

  it('refuses a checkout that is not a git work tree', async () => {
    const error = await refusal(() => guardStatus(scratch));
    expect(error.message).toContain('the checkout is not a git work tree');
  });

  it('refuses to install a hook whose launcher does not exist', async () => {
    const error = await refusal(() => installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher: { ...launcher, main: join(scratch, 'missing.js') } }));
    expect(error.message).toContain('missing.js is missing');
    expect((await guardStatus(root)).hooks[0]?.state).toBe('absent');
  });

  it('reports an installed hook whose launcher has gone', async () => {
    const main = join(scratch, 'soon-gone.mjs');
    await writeFile(main, RECORDER);
    await installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher: { ...launcher, main } });
    await writeFile(main, ''); // still there
    expect((await guardStatus(root)).hooks[0]?.launcher_found).toBe(true);
    await rm(main);
    expect((await guardStatus(root)).hooks[0]?.launcher_found).toBe(false);
  });
});

describe('the hook scripts', () => {
  it('run the user hook first with the same arguments, then the launcher with guard run', async () => {
    const marker = join(scratch, 'user-ran');
    await userHook('pre-commit', `echo "$@" > '${marker}'`);
    await installHooks(root, { mode: 'warn', hooks: ['pre-commit'], launcher });
    const run = await runHook('pre-commit', ['one', 'two']);
    expect(run.code).toBe(0);
    expect(await readFile(marker, 'utf8')).toBe('one two\n');
    expect(run.recorded?.args).toEqual(['guard', 'run', 'pre-commit', '--', 'one', 'two']);
    expect(run.recorded?.guard).toBe('warn');
  });

  it('end with the user hook exit code when it fails, without running the guard', async () => {
    await userHook('pre-commit', 'echo no >&2; exit 7');
    await installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher });
    const run = await runHook('pre-commit', []);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('no');
    expect(run.recorded).toBeNull();
  });

  it('give pre-push stdin to both the user hook and the guard, and pass the exit code of the guard', async () => {
    const copy = join(scratch, 'user-stdin');
    await userHook('pre-push', `cat > '${copy}'`);
    await installHooks(root, { mode: 'refuse', hooks: ['pre-push'], launcher });
    const input = `refs/heads/main ${'a'.repeat(40)} refs/heads/main ${'b'.repeat(40)}\nrefs/heads/x ${'c'.repeat(40)} refs/heads/x ${'0'.repeat(40)}\n`;
    const run = await runHook('pre-push', ['origin', 'git@example:x.git'], input, { LAUNCHER_EXIT: '1' });
    expect(run.code).toBe(1);
    expect(await readFile(copy, 'utf8')).toBe(input);
    expect(run.recorded?.stdin).toBe(input);
    expect(run.recorded?.args).toEqual(['guard', 'run', 'pre-push', '--', 'origin', 'git@example:x.git']);
    expect(run.recorded?.guard).toBe('refuse');
  });

  it('let MAJORDOMUS_GUARD override the installed mode for one command', async () => {
    await installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher });
    expect((await runHook('pre-commit', [], '', { MAJORDOMUS_GUARD: 'off' })).recorded?.guard).toBe('off');
  });

  it('name the checkout below the top level with --repo', async () => {
    const sub = join(root, 'packages/app');
    await mkdir(sub, { recursive: true });
    await installHooks(sub, { mode: 'refuse', hooks: ['pre-commit'], launcher });
    const run = await runHook('pre-commit', []);
    expect(run.recorded?.args).toEqual(['guard', 'run', 'pre-commit', '--repo', 'packages/app', '--']);
  });

  it('say one line and let the commit through when the launcher has gone', async () => {
    const main = join(scratch, 'moved-away.mjs');
    await writeFile(main, RECORDER);
    await installHooks(root, { mode: 'refuse', hooks: ['pre-commit'], launcher: { ...launcher, main } });
    await rm(main);
    const run = await runHook('pre-commit', []);
    expect(run.code).toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('majordomus git guard:');
    expect(run.stderr).toContain('nothing was checked');
  });
});
