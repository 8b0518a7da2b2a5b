/**
 * The git guard as `init` offers it: the same hooks and install as `majordomus guard install`
 * (src/guard/hooks.ts), with its defaults (refuse mode, both hooks).
 */
import { join } from 'node:path';
import { CapabilityError } from '../platform/errors.js';
import { GUARD_HOOKS, guardStatus, installHooks } from '../guard/hooks.js';
import { PACKAGE_ROOT } from '../platform/package-root.js';

export type GuardState = 'installed' | 'absent' | 'no-git';

/** Whether both hooks are the guard already; `no-git` when the root has no git hooks at all. */
export async function guardState(root: string): Promise<GuardState> {
  try {
    const status = await guardStatus(root);
    return status.hooks.every((hook) => hook.state === 'ours' && hook.launcher_found === true) ? 'installed' : 'absent';
  } catch (error) {
    if (error instanceof CapabilityError) return 'no-git';
    throw error;
  }
}

/** Installs the guard; answers the hooks of the user's own that were moved to `<name>.user`. */
export async function installGuard(root: string): Promise<string[]> {
  const result = await installHooks(root, {
    mode: 'refuse',
    hooks: GUARD_HOOKS,
    launcher: { node: process.execPath, main: join(PACKAGE_ROOT, 'dist/src/cli/main.js') },
  });
  return result.moved;
}
