/** The git guard (docs/GUARD.md): optional, so its absence is information; hooks that name a majordomus that is gone are not. */
import { CapabilityError, errorMessage } from '../platform/errors.js';
import { guardStatus } from '../guard/hooks.js';
import { finding, type Finding } from './findings.js';

export async function guardFinding(root: string): Promise<Finding> {
  let status;
  try {
    status = await guardStatus(root);
  } catch (error) {
    if (error instanceof CapabilityError) return finding('guard', 'info', 'not a git work tree: the git guard does not apply');
    return finding('guard', 'warn', `cannot read the git hooks: ${errorMessage(error)}`, 'majordomus guard status shows the same');
  }
  const ours = status.hooks.filter((hook) => hook.state === 'ours');
  const gone = ours.filter((hook) => hook.launcher_found !== true);
  if (gone.length > 0) {
    return finding(
      'guard',
      'warn',
      `the git guard's ${gone.map((hook) => hook.hook).join(' and ')} ${gone.length === 1 ? 'hook names' : 'hooks name'} a node or majordomus that no longer exists: it lets every commit through`,
      'run `majordomus guard install` again (it rewrites the hooks with this installation)',
    );
  }
  if (ours.length === status.hooks.length) {
    const modes = [...new Set(ours.map((hook) => hook.mode ?? 'refuse'))].join('/');
    return finding('guard', 'ok', `the git guard is installed (${ours.map((hook) => hook.hook).join(', ')}; ${modes}) in ${status.directory}`);
  }
  const missing = status.hooks.filter((hook) => hook.state !== 'ours').map((hook) => hook.hook);
  return finding('guard', 'info', `the git guard is not installed for ${missing.join(' and ')} (optional: it refuses a commit over another agent's exclusive claim)`, 'majordomus guard install');
}
