/**
 * Where the command of a client's entry resolves on this machine, as the client's own spawn would
 * find it: a name is looked up on PATH, a path (anything with a `/`) is taken as it is, relative to
 * the directory the client starts the server in. `init` flags an existing entry whose path does not
 * exist here (a launcher of another machine, committed); `doctor` checks every configured entry.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export type CommandResolution = { found: true; path: string } | { found: false; why: string };

/** Whether `command` is written as a path rather than a name to look up on PATH. */
export function isPathCommand(command: string): boolean {
  return command.includes('/');
}

async function executableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Resolves `command` for a server started in `cwd` with `pathVariable` as its PATH. A path must be
 * an executable file; a name is the first executable file of that name on PATH (an empty entry
 * of PATH is the working directory, as execvp takes it).
 */
export async function resolveCommand(command: string, cwd: string, pathVariable: string | undefined): Promise<CommandResolution> {
  if (isPathCommand(command)) {
    const path = resolve(cwd, command);
    if (await executableFile(path)) return { found: true, path };
    const where = isAbsolute(command) ? '' : ` (relative to ${cwd})`;
    try {
      await stat(path);
      return { found: false, why: `${command}${where} is not an executable file` };
    } catch {
      return { found: false, why: `${command}${where} does not exist on this machine` };
    }
  }
  for (const directory of (pathVariable ?? '').split(delimiter)) {
    const path = join(directory === '' ? cwd : directory, command);
    if (await executableFile(path)) return { found: true, path };
  }
  return { found: false, why: `${command} is not on PATH` };
}

/** Why an entry's command written as a path does not resolve here; null for a name or a path that does. */
export async function missingPath(command: string, cwd: string): Promise<string | null> {
  if (!isPathCommand(command)) return null;
  const resolution = await resolveCommand(command, cwd, undefined);
  return resolution.found ? null : resolution.why;
}
