/**
 * The command every client configuration `init` writes starts majordomus with. The files are
 * committed and read on every machine of a team, so by default the command names nothing of this
 * machine: `majordomus mcp`, found on each machine's PATH. `--npx` suits a team that does not
 * install globally (npx fetches the same major version); `--local` names this machine's launcher
 * by its absolute path, for a checkout of majordomus itself or a setup nobody else shares.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MajordomusError, errorMessage } from '../platform/errors.js';
import { PACKAGE_ROOT } from '../platform/package-root.js';

/** How the configurations start majordomus. */
export type CommandStyle = 'path' | 'npx' | 'local';

/** The executable and its arguments, as a client's `command` and `args`. */
export interface ServerCommand {
  style: CommandStyle;
  command: string;
  args: readonly string[];
}

/** The package's name on npm, and the executable its `bin` installs. */
export const PACKAGE_NAME = 'majordomus';

/** `majordomus@<major>`: npx fetches the newest release this version is compatible with. */
export function npxSpec(version: string): string {
  const major = /^(\d+)\./.exec(version)?.[1];
  if (major === undefined) throw new MajordomusError('MAJ_INTERNAL', `the package version "${version}" is not semver`);
  return `${PACKAGE_NAME}@${major}`;
}

/** The launcher of this package, by its absolute real path (links resolved). */
export async function launcherPath(): Promise<string> {
  const path = resolve(PACKAGE_ROOT, 'bin/majordomus-mcp');
  try {
    return await realpath(path);
  } catch (error) {
    throw new MajordomusError('MAJ_INTERNAL', `the launcher ${path} of this package is missing (${errorMessage(error)}); reinstall majordomus`);
  }
}

/** The command of `style`, for a package of `version`. */
export async function serverCommand(style: CommandStyle, version: string): Promise<ServerCommand> {
  switch (style) {
    case 'path':
      return { style, command: PACKAGE_NAME, args: ['mcp'] };
    case 'npx':
      return { style, command: 'npx', args: ['-y', npxSpec(version), 'mcp'] };
    case 'local':
      return { style, command: await launcherPath(), args: [] };
  }
}
