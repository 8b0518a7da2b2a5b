/**
 * `majordomus guard install|uninstall|status|run`. The first three run the capabilities whose CLI
 * path they are; `run` is what the installed hooks call, and loads neither the registry nor the
 * layer (it runs on every commit).
 */
import { resolve } from 'node:path';
import { EXIT } from '../../platform/errors.js';
import { GUARD_HOOKS, GUARD_MODES, type GuardHook, type GuardStatus } from '../../guard/hooks.js';
import { choiceOption, usageError, type ParsedArgs } from '../args.js';

const ACTIONS: Record<string, readonly string[]> = {
  install: ['mode', 'hooks', 'format'],
  uninstall: ['format'],
  status: ['format'],
  run: [],
};

function print(text: string): void {
  process.stdout.write(`${text}\n`); // -- stdout-ok: the command's answer
}

/** `--hooks pre-commit,pre-push`: each named once, at least one. */
export function hooksOption(value: string | boolean | undefined): GuardHook[] | undefined {
  if (value === undefined) return undefined;
  const names = typeof value === 'string' ? value.split(',').map((name) => name.trim()) : [];
  const known = names.filter((name): name is GuardHook => (GUARD_HOOKS as readonly string[]).includes(name));
  if (names.length === 0 || known.length !== names.length || new Set(known).size !== known.length) {
    throw usageError(`--hooks takes ${GUARD_HOOKS.join(', ')} or both separated by a comma, each once, not "${String(value)}"`);
  }
  return known;
}

/** The hooks of a status, one line each. */
export function statusLines(status: GuardStatus): string[] {
  return [
    `hooks directory: ${status.directory}`,
    ...status.hooks.map((h) => {
      const state =
        h.state === 'ours'
          ? `the git guard (${h.mode ?? 'unknown mode'})${h.launcher_found === false ? ', but the majordomus it runs is gone: install again' : ''}`
          : h.state === 'foreign'
            ? 'a hook that is not the guard'
            : 'no hook';
      return `${h.hook.padEnd(11)} ${state}${h.chained ? `; your own hook (${h.hook}.user) runs first` : ''}`;
    }),
  ];
}

export async function runGuardCommand(args: ParsedArgs): Promise<number> {
  const [action, ...rest] = args.positionals;
  if (action === undefined || !(action in ACTIONS)) {
    throw usageError(`guard needs install, uninstall, status or run${action === undefined ? '' : `, not "${action}"`}`);
  }
  for (const name of ['mode', 'hooks', 'format'] as const) {
    if (args.options[name] !== undefined && !ACTIONS[action]?.includes(name)) throw usageError(`--${name} is not an option of guard ${action}`);
  }
  if (action === 'run') {
    const [hook] = rest;
    if (hook === undefined || !(GUARD_HOOKS as readonly string[]).includes(hook)) {
      throw usageError(`guard run needs the hook it runs for, ${GUARD_HOOKS.join(' or ')}${hook === undefined ? '' : `, not "${hook}"`}`);
    }
    for (const name of ['discovery', 'strict'] as const) {
      if (args.options[name] !== undefined) throw usageError(`--${name} is not an option of guard run`);
    }
    const { runGuard } = await import('../../guard/run.js');
    return runGuard(hook as GuardHook, resolve(args.global.repo ?? process.cwd()));
  }
  if (rest.length > 0) throw usageError(`unexpected argument "${rest[0]}"`);

  const format = choiceOption(args.options.format, 'format', ['text', 'json'] as const, 'text');
  const input =
    action === 'install'
      ? {
          ...(args.options.mode === undefined ? {} : { mode: choiceOption(args.options.mode, 'mode', GUARD_MODES, 'refuse') }),
          ...(args.options.hooks === undefined ? {} : { hooks: hooksOption(args.options.hooks) }),
        }
      : {};
  const [{ runCliPath }, { builtinRegistry }] = await Promise.all([import('./capabilities.js'), import('../../runtime/load.js')]);
  const answer = (await runCliPath(builtinRegistry(), `guard ${action}`, input, args)) as GuardStatus & {
    moved?: GuardHook[];
    removed?: GuardHook[];
    restored?: GuardHook[];
  };
  if (format === 'json') {
    print(JSON.stringify(answer, null, 2));
    return EXIT.ok;
  }
  const lines = statusLines(answer);
  if (action === 'install') {
    const moved = (answer.moved ?? []).map((hook) => `; moved your ${hook} hook to ${hook}.user, where it still runs first`);
    lines.unshift(`git guard installed${moved.join('')}`);
  }
  if (action === 'uninstall') {
    const removed = answer.removed?.length ? `removed the git guard from ${answer.removed.join(' and ')}` : 'the git guard was not installed';
    const restored = answer.restored?.length ? `; put back your ${answer.restored.join(' and ')} hook` : '';
    lines.unshift(`${removed}${restored}`);
  }
  print(lines.join('\n'));
  return EXIT.ok;
}
