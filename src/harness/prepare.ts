/**
 * What a turn is launched with, checked before anything starts: the prompt (given, or read from a
 * file inside the checkout), the working directory (inside the checkout, never outside), the
 * command and its environment, and the argv as a caller may see it (secret-looking values redacted).
 */
import { statSync } from 'node:fs';
import { readForModel } from '../floor/egress.js';
import type { Floor } from '../floor/rules.js';
import { agentEnvironment, type ChildEnv } from '../platform/child-env.js';
import { CapabilityError } from '../platform/errors.js';
import { ConfineError, realExistingInside, resolveInside } from '../platform/confine.js';
import { resolveCommand } from './process.js';
import type { Profile } from './profiles.js';
import { launchSettings } from './session.js';
import type { SessionRecord, SessionStore } from './store.js';
import { HarnessRefusal } from './types.js';
import { adapterFor } from './vendors/index.js';

/** The largest prompt accepted, given or read from a file. */
export const MAX_PROMPT_BYTES = 1024 * 1024;

export interface PromptInput {
  prompt?: string;
  file?: string;
}

/** The absolute working directory of a turn: inside the checkout, as written and through links. */
export function resolveCwd(root: string, cwd: string): string {
  const given = cwd === '' ? '.' : cwd;
  let real: string;
  try {
    real = realExistingInside(root, resolveInside(root, given).absolute, given).absolute;
  } catch (error) {
    if (!(error instanceof ConfineError)) throw error;
    const fix = error.reason === 'absolute' ? '' : error.reason === 'missing' ? '' : '; give a path inside it';
    const code = error.reason === 'missing' || error.reason === 'unreadable' ? 'refused' : 'outside_checkout';
    throw new HarnessRefusal(`cwd "${cwd}" ${error.detail}${fix}`, code);
  }
  if (!statSync(real).isDirectory()) throw new HarnessRefusal(`cwd "${cwd}" is not a directory`);
  return real;
}

/**
 * Exactly one of `prompt` and `file`. A file goes to a model as the agent's prompt, so the egress
 * floor decides (src/floor/egress.ts): inside the checkout, a regular file, not protected.
 */
export async function promptOf(root: string, floor: Floor, input: PromptInput): Promise<string> {
  if ((input.prompt === undefined) === (input.file === undefined)) {
    throw new HarnessRefusal('give exactly one of prompt and file (a file relative to the checkout\'s root holding the prompt)');
  }
  if (input.prompt !== undefined) {
    if (input.prompt.trim() === '') throw new HarnessRefusal('the prompt is blank; say what the agent should do');
    return input.prompt;
  }
  let text: string;
  try {
    ({ text } = await readForModel(root, floor, input.file as string, MAX_PROMPT_BYTES));
  } catch (error) {
    if (error instanceof CapabilityError) throw new HarnessRefusal(error.message, error.code);
    throw error;
  }
  if (text.trim() === '') throw new HarnessRefusal(`file "${input.file}" is empty; write the prompt into it`);
  return text;
}

const SECRET_FLAG = /key|token|secret|password|passwd|auth|credential/i;

/**
 * The argv with the value of every secret-looking flag replaced: `--api-key X`, `--token=X`, and
 * the adapter's own `extraFlags`.
 */
export function redactArgv(argv: readonly string[], extraFlags: readonly string[]): string[] {
  const secret = (flag: string): boolean => flag.startsWith('-') && (SECRET_FLAG.test(flag) || extraFlags.includes(flag));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    if (arg.startsWith('-') && eq > 0 && secret(arg.slice(0, eq))) {
      out.push(`${arg.slice(0, eq)}=[redacted]`);
    } else if (secret(arg) && i + 1 < argv.length) {
      out.push(arg, '[redacted]');
      i += 1;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** A turn ready to launch. */
export interface Prepared {
  command: string;
  args: string[];
  stdin: string | null;
  cwd: string;
  env: ChildEnv;
  /** What sessionInfo shows. */
  argv: string[];
  envNames: string[];
  /** The depth stamped on the agent (`MAJORDOMUS_SPAWN_DEPTH`): the caller's + 1. */
  agentDepth: number;
}

/** Where a turn is prepared: the checkout, the session files, what agents inherit. */
export interface PrepareContext {
  root: string;
  store: SessionStore;
  /** What agents inherit before src/platform/child-env.ts takes out the role variables (undefined: this process's environment). */
  env: ChildEnv | undefined;
}

/**
 * The command, arguments, stdin, cwd and environment of a turn of `record` (resuming the vendor's
 * `resumeId` when there is one), refused when the profile's command is not found.
 */
export function prepareTurn(context: PrepareContext, record: SessionRecord, profile: Profile, prompt: string, resumeId: string | null, depth: number): Prepared {
  const adapter = adapterFor(record.agent);
  const cwd = resolveCwd(context.root, record.launch.cwd);
  const commandName = profile.command ?? adapter.defaultCommand;
  const command = resolveCommand(commandName, cwd, childPath(profile, context.env));
  if (command === null) {
    throw new HarnessRefusal(`cannot start ${record.agent}: "${commandName}" was not found${commandName.includes('/') ? '' : ' on PATH'}; install the ${record.agent} CLI or set command in profile "${profile.id}"`);
  }
  const invocation = adapter.invocation({ prompt, cwd, args: record.launch.args, ...launchSettings(record.launch) }, resumeId);
  // A default command may be a script that needs its interpreter's arguments first (the executor).
  const leading = profile.command === undefined ? [...(adapter.defaultCommandArgs ?? [])] : [];
  // Its depth; an executor, majordomus's own, also its task (the session), where it keeps its
  // conversation, and the coverage variable a test run measures it through.
  const executor = record.agent === 'executor' ? { taskId: record.session, stateDir: context.store.sessionDir(record.session), ours: true } : {};
  const { env, names } = agentEnvironment({ depth: depth + 1, ...executor }, profile.env, context.env);
  // The vendor's session id and a prompt passed as an argument are never shown.
  const shown = invocation.args.map((arg, i) => (invocation.hidden.includes(i) ? (arg === prompt ? '<prompt>' : '<hidden>') : arg));
  return {
    command,
    args: [...leading, ...invocation.args],
    stdin: invocation.stdin,
    cwd,
    env,
    argv: redactArgv([commandName, ...leading, ...shown], adapter.secretFlags ?? []),
    envNames: names,
    agentDepth: depth + 1,
  };
}

/** The PATH an agent of `profile` runs with, where its command is looked up. */
export function childPath(profile: Profile, inherited: ChildEnv | undefined): string {
  return agentEnvironment({ depth: 0 }, profile.env, inherited).env.PATH ?? '';
}
