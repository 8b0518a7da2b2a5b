/**
 * What a turn is launched with, checked before anything starts: the prompt (given, or read from a
 * file inside the checkout), the working directory (inside the checkout, never outside), and the
 * argv as a caller may see it (secret-looking values redacted).
 */
import { realpathSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { HarnessRefusal } from './types.js';

/** The largest prompt accepted, given or read from a file. */
export const MAX_PROMPT_BYTES = 1024 * 1024;

export interface PromptInput {
  prompt?: string;
  file?: string;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * An absolute real path inside the checkout for `path` (relative to the root). A path that leaves
 * the root, directly or through a symbolic link, is refused.
 */
function insideRoot(root: string, path: string, what: string): string {
  if (isAbsolute(path)) throw new HarnessRefusal(`${what} "${path}" must be relative to the checkout's root`);
  const joined = resolve(root, path);
  if (!inside(root, joined)) throw new HarnessRefusal(`${what} "${path}" leads outside the checkout; give a path inside it`);
  let real: string;
  try {
    real = realpathSync(joined);
  } catch {
    throw new HarnessRefusal(`${what} "${path}" does not exist in the checkout`);
  }
  if (!inside(root, real)) throw new HarnessRefusal(`${what} "${path}" leads outside the checkout through a symbolic link`);
  return real;
}

/** The absolute working directory of a turn. */
export function resolveCwd(root: string, cwd: string): string {
  const real = insideRoot(root, cwd === '' ? '.' : cwd, 'cwd');
  if (!statSync(real).isDirectory()) throw new HarnessRefusal(`cwd "${cwd}" is not a directory`);
  return real;
}

/** Exactly one of `prompt` and `file`; a file is read whole (bounded), as UTF-8. */
export async function promptOf(root: string, input: PromptInput): Promise<string> {
  if ((input.prompt === undefined) === (input.file === undefined)) {
    throw new HarnessRefusal('give exactly one of prompt and file (a file relative to the checkout\'s root holding the prompt)');
  }
  if (input.prompt !== undefined) {
    if (input.prompt.trim() === '') throw new HarnessRefusal('the prompt is blank; say what the agent should do');
    return input.prompt;
  }
  const path = insideRoot(root, input.file as string, 'file');
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new HarnessRefusal(`file "${input.file}" is not a regular file`);
    if (info.size > MAX_PROMPT_BYTES) throw new HarnessRefusal(`file "${input.file}" is ${info.size} bytes; a prompt may have at most ${MAX_PROMPT_BYTES}`);
    const text = (await handle.readFile()).toString('utf8');
    if (text.trim() === '') throw new HarnessRefusal(`file "${input.file}" is empty; write the prompt into it`);
    return text;
  } finally {
    await handle.close();
  }
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
