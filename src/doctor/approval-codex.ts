/**
 * Codex reads a project's `.codex/config.toml` only in a trusted project: its own
 * `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`) records
 * `[projects."<path>"] trust_level = "trusted"` (or `"untrusted"`). With no choice recorded,
 * Codex asks when it starts in the folder; `codex exec` does not ask and ignores the project file.
 */
import { join } from 'node:path';
import type { ChildEnv } from '../platform/child-env.js';
import { clientDirectory, objectAt, readUserToml } from './user-files.js';
import type { Approval } from './approval.js';

export async function codexTrust(root: string, env: ChildEnv): Promise<Approval> {
  const config = join(clientDirectory(env, 'CODEX_HOME', '.codex'), 'config.toml');
  const trustLine = `[projects.${JSON.stringify(root)}]\ntrust_level = "trusted"`;
  const read = await readUserToml(config);
  if (read.state === 'unreadable') return { status: 'fail', message: `cannot read Codex's own configuration: ${read.why}`, fix: `fix ${config}; Codex refuses to start with it too` };
  const level = read.state === 'document' ? objectAt(objectAt(read.document, 'projects'), root).trust_level : undefined;
  if (level === 'trusted') return { status: 'ok', message: `the project is trusted (${config})` };
  if (level === 'untrusted') {
    return {
      status: 'fail',
      message: `the project is marked untrusted in ${config}, so Codex ignores .codex/config.toml`,
      fix: `set trust_level = "trusted" under [projects.${JSON.stringify(root)}] in ${config}`,
    };
  }
  return {
    status: 'warn',
    message: 'the project is not trusted yet: Codex reads .codex/config.toml only in a trusted project (it asks when it starts here; `codex exec` does not ask)',
    fix: `trust the folder when Codex asks, or add to ${config}:\n${trustLine}`,
  };
}
