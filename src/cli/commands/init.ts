/**
 * `majordomus init [--npx | --local] [--force] [--dry-run] [--guard | --no-guard]`: sets a
 * repository up for majordomus (docs/INIT.md). The whole plan is computed first; a file that cannot
 * be parsed or an entry of somebody else's is refused before anything is written. stdout carries
 * what was written (or, with --dry-run, the diff); every log line goes to stderr.
 */
import { createInterface } from 'node:readline/promises';
import { EXIT, MajordomusError, errorMessage } from '../../platform/errors.js';
import { planDiff } from '../../init/diff.js';
import { guardState, installGuard, type GuardState } from '../../init/guard.js';
import { planInit, type InitPlan, type PlannedFile } from '../../init/plan.js';
import { initRoot } from '../../init/root.js';
import { resolveCommand } from '../../init/command-path.js';
import { serverCommand, type CommandStyle, type ServerCommand } from '../../init/server-command.js';
import { writePlan } from '../../init/write.js';
import { commandEnvironment } from '../../platform/child-env.js';
import { log } from '../../platform/log.js';
import { VERSION } from '../../platform/version.js';
import { usageError, type ParsedArgs } from '../args.js';

const INSTALL_COMMAND = 'majordomus guard install';

function print(text: string): void {
  process.stdout.write(`${text}\n`); // -- stdout-ok: the command's answer
}

type GuardChoice = 'install' | 'skip' | 'ask';

function guardChoice(args: ParsedArgs): GuardChoice {
  if (args.options.guard === true && args.options['no-guard'] === true) throw usageError('--guard and --no-guard contradict each other');
  if (args.options.guard === true) return 'install';
  if (args.options['no-guard'] === true) return 'skip';
  return 'ask';
}

function commandStyle(args: ParsedArgs): CommandStyle {
  if (args.options.npx === true && args.options.local === true) throw usageError('--npx and --local contradict each other');
  if (args.options.npx === true) return 'npx';
  return args.options.local === true ? 'local' : 'path';
}

function fileLine(file: PlannedFile, width: number): string {
  const stale = file.stale === undefined ? '' : `, whose command ${file.stale}`;
  const replaced = file.conflict !== null && file.state === 'updated' ? `; replaced the majordomus entry that was there (--force)${stale}` : '';
  const client = file.client === undefined ? '' : ` (${file.client}${replaced})`;
  return `${file.state.padEnd(10)}${file.path.padEnd(width)}${client}`.trimEnd();
}

function conflictError(conflicts: readonly PlannedFile[]): MajordomusError {
  const lines = conflicts.map((file) => `  ${file.path}: ${file.conflict ?? ''}`);
  return new MajordomusError(
    'MAJ_INIT_CONFLICT',
    `nothing was written: ${conflicts.length === 1 ? 'a client configuration holds' : 'client configurations hold'} a majordomus entry that differs from the one init writes:\n${lines.join('\n')}\nrun init --force to replace ${conflicts.length === 1 ? 'it' : 'them'} (init --dry-run --force shows the diff)`,
  );
}

/** Asks on the terminal; anything but yes is no. */
async function ask(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}

function interactive(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/** The guard's line of the report; installs it when chosen. Answers whether a requested install failed. */
async function offerGuard(root: string, choice: GuardChoice, state: GuardState, dryRun: boolean): Promise<{ line: string; failed: boolean }> {
  // (--guard outside git was refused before anything was written.)
  if (state === 'no-git') return { line: 'git guard: not offered (not a git work tree)', failed: false };
  if (state === 'installed') return { line: 'git guard: installed already', failed: false };
  if (dryRun) {
    return { line: choice === 'install' ? 'git guard: would be installed' : `git guard: not installed; to install it: ${INSTALL_COMMAND}`, failed: false };
  }
  let install = choice === 'install';
  if (choice === 'ask') {
    if (!interactive()) return { line: `git guard: not installed; to install it: ${INSTALL_COMMAND}`, failed: false };
    install = await ask('Install the git guard (pre-commit and pre-push hooks that refuse to commit paths another agent claimed)?');
  }
  if (!install) return { line: `git guard: not installed; to install it later: ${INSTALL_COMMAND}`, failed: false };
  try {
    const moved = await installGuard(root);
    const kept = moved.length === 0 ? '' : `; your own ${moved.join(' and ')} hook still runs first (moved to <name>.user)`;
    return { line: `git guard: installed (pre-commit, pre-push)${kept}`, failed: false };
  } catch (error) {
    log.error(`the git guard was not installed: ${errorMessage(error)}`);
    return { line: `git guard: NOT installed: ${errorMessage(error)}`, failed: true };
  }
}

/** What the configurations start, and whether the files may be committed (docs/INIT.md "Which files to commit"). */
async function commandLines(plan: InitPlan, server: ServerCommand): Promise<string[]> {
  const shown = [server.command, ...server.args].join(' ');
  if (server.style === 'local') {
    return [`clients start: ${shown} (this machine's launcher, by its absolute path: keep the client configurations out of git)`];
  }
  let start = `clients start: ${shown}`;
  if (server.style === 'path') {
    const found = await resolveCommand(server.command, plan.root, commandEnvironment().PATH);
    start += found.found ? ` (on PATH here: ${found.path})` : ` (NOT on PATH here: install it with npm install -g majordomus, or run init --npx)`;
  }
  return [start, `commit: ${plan.files.map((file) => file.path).join(' ')}`];
}

async function report(plan: InitPlan, server: ServerCommand, guardLine: string, guardChanged: boolean): Promise<string[]> {
  const width = Math.max(...plan.files.map((file) => file.path.length)) + 2;
  const lines = [`majordomus init in ${plan.root}`, ...plan.files.map((file) => fileLine(file, width)), guardLine, ...(await commandLines(plan, server))];
  const changed = plan.files.some((file) => file.state !== 'unchanged') || guardChanged;
  // Gemini CLI reads .gemini/settings.json only in the directory it starts in (docs/INIT.md).
  lines.push(changed ? 'done: start claude, codex or opencode anywhere in the repository, gemini at its root' : 'up to date: nothing to change');
  return lines;
}

export async function runInit(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError(`init takes no arguments, not "${args.positionals[0]}"`);
  for (const name of ['discovery', 'strict'] as const) {
    if (args.options[name] !== undefined) throw usageError(`--${name} is not an option of init`);
  }
  const choice = guardChoice(args);
  const style = commandStyle(args);
  const dryRun = args.options['dry-run'] === true;
  const force = args.options.force === true;

  const root = await initRoot(args.global.repo, process.cwd());
  const server = await serverCommand(style, VERSION);
  const plan = await planInit(root, { server, force });
  if (plan.conflicts.length > 0) throw conflictError(plan.conflicts);
  const state = await guardState(root);
  if (state === 'no-git' && choice === 'install') {
    throw new MajordomusError('MAJ_NOT_A_REPOSITORY', `${root} is not a git work tree, so the git guard cannot be installed; nothing was written`);
  }

  if (dryRun) {
    process.stdout.write(planDiff(plan)); // -- stdout-ok: the command's answer
    for (const file of plan.files) if (file.state !== 'unchanged') log.info(`dry run: would ${file.state === 'created' ? 'create' : 'update'} ${file.path}`);
    const { line } = await offerGuard(root, choice, state, true);
    log.info(`dry run: ${line}; nothing was written`);
    return EXIT.ok;
  }

  await writePlan(plan);
  const guard = await offerGuard(root, choice, state, false);
  print((await report(plan, server, guard.line, guard.line.startsWith('git guard: installed ('))).join('\n'));
  return guard.failed ? EXIT.contract : EXIT.ok;
}
