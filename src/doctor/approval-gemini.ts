/**
 * Gemini CLI reads a workspace's `.gemini/settings.json` only in a trusted folder (unless folder
 * trust is off: `security.folderTrust.enabled: false` in `~/.gemini/settings.json`). The trust it
 * records lives in `~/.gemini/trustedFolders.json` (or `GEMINI_CLI_TRUSTED_FOLDERS_PATH`):
 * `{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`, the longest rule containing the
 * folder winning, `TRUST_PARENT` trusting the rule's parent. `GEMINI_CLI_TRUST_WORKSPACE=true`
 * trusts any folder; `false`, or `GEMINI_RESTRICTED_MODE=true`, none.
 */
import { dirname, join, relative, isAbsolute } from 'node:path';
import type { ChildEnv } from '../platform/child-env.js';
import { homeOf, objectAt, readUserJson } from './user-files.js';
import type { Approval } from './approval.js';

function contains(directory: string, path: string): boolean {
  const inside = relative(directory, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}

/** The trust level of the longest rule that contains `folder`, with the rule's path. */
function ruleFor(rules: Record<string, unknown>, folder: string): { path: string; level: string } | null {
  let best: { path: string; level: string } | null = null;
  for (const [path, level] of Object.entries(rules)) {
    if (typeof level !== 'string') continue;
    const effective = level === 'TRUST_PARENT' ? dirname(path) : path;
    if (contains(effective, folder) && (best === null || path.length > best.path.length)) best = { path, level };
  }
  return best;
}

export async function geminiTrust(root: string, env: ChildEnv): Promise<Approval> {
  if (env.GEMINI_RESTRICTED_MODE === 'true' || env.GEMINI_CLI_TRUST_WORKSPACE === 'false') {
    return { status: 'fail', message: 'GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE=false makes every folder untrusted', fix: 'unset that variable where you start gemini' };
  }
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return { status: 'ok', message: 'GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder' };
  const gemini = join(homeOf(env), '.gemini');
  const settings = await readUserJson(join(gemini, 'settings.json'));
  if (settings.state === 'document' && objectAt(objectAt(settings.document, 'security'), 'folderTrust').enabled === false) {
    return { status: 'ok', message: `folder trust is off (${join(gemini, 'settings.json')}): every folder is trusted` };
  }
  const moved = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH;
  const file = moved !== undefined && moved !== '' ? moved : join(gemini, 'trustedFolders.json');
  const read = await readUserJson(file);
  if (read.state === 'unreadable') return { status: 'fail', message: `Gemini CLI cannot read its trusted folders: ${read.why}`, fix: `fix ${file}; Gemini CLI refuses to start with it too` };
  const rule = read.state === 'document' && read.document !== null && typeof read.document === 'object' ? ruleFor(read.document as Record<string, unknown>, root) : null;
  if (rule?.level === 'DO_NOT_TRUST') {
    return { status: 'fail', message: `the folder is not trusted (${JSON.stringify(rule.path)}: DO_NOT_TRUST in ${file}), so Gemini CLI ignores .gemini/settings.json`, fix: `change that rule to "TRUST_FOLDER" in ${file}` };
  }
  if (rule !== null && (rule.level === 'TRUST_FOLDER' || rule.level === 'TRUST_PARENT')) return { status: 'ok', message: `the folder is trusted (${JSON.stringify(rule.path)}: ${rule.level} in ${file})` };
  return {
    status: 'warn',
    message: 'the folder is not trusted yet: Gemini CLI reads .gemini/settings.json only in a trusted folder (it asks when it starts here; `gemini -p` does not ask and stops)',
    fix: `trust the folder when Gemini CLI asks, or add ${JSON.stringify({ [root]: 'TRUST_FOLDER' })} to ${file}`,
  };
}
