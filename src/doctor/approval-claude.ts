/**
 * Claude Code runs a project server of `.mcp.json` only once it is approved for the project. It
 * records the choice in `~/.claude.json` (`projects["<root>"]`: `enabledMcpjsonServers`,
 * `disabledMcpjsonServers`) and reads approvals from its settings files too
 * (`enableAllProjectMcpServers`, `enabledMcpjsonServers`): the user's `~/.claude/settings.json` and
 * the project's `.claude/settings.json` and `.claude/settings.local.json`. A rejection anywhere
 * wins; with no choice recorded, Claude Code asks when it starts in the repository.
 */
import { join } from 'node:path';
import type { ChildEnv } from '../platform/child-env.js';
import { clientDirectory, homeOf, objectAt, readUserJson } from './user-files.js';
import type { Approval } from './approval.js';

const SERVER = 'majordomus';
const LOCAL_SETTINGS = '.claude/settings.local.json';

interface Choices {
  where: string;
  values: Record<string, unknown>;
}

function lists(values: Record<string, unknown>, key: string): string[] {
  const list = values[key];
  return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
}

/** Where Claude Code keeps its state file: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`. */
function stateFile(env: ChildEnv): string {
  const moved = env.CLAUDE_CONFIG_DIR;
  return moved !== undefined && moved !== '' ? join(moved, '.claude.json') : join(homeOf(env), '.claude.json');
}

async function choices(root: string, env: ChildEnv): Promise<Choices[]> {
  const found: Choices[] = [];
  const state = stateFile(env);
  const project = await readUserJson(state);
  if (project.state === 'document') found.push({ where: `${state} (projects["${root}"])`, values: objectAt(objectAt(project.document, 'projects'), root) });
  const settings = [join(clientDirectory(env, 'CLAUDE_CONFIG_DIR', '.claude'), 'settings.json'), join(root, '.claude/settings.json'), join(root, LOCAL_SETTINGS)];
  for (const path of settings) {
    const file = await readUserJson(path);
    if (file.state === 'document' && file.document !== null && typeof file.document === 'object') found.push({ where: path, values: file.document as Record<string, unknown> });
  }
  return found;
}

export async function claudeApproval(root: string, env: ChildEnv): Promise<Approval> {
  const all = await choices(root, env);
  const rejected = all.find((choice) => lists(choice.values, 'disabledMcpjsonServers').includes(SERVER));
  if (rejected !== undefined) {
    return {
      status: 'fail',
      message: `Claude Code was told not to start majordomus here (disabledMcpjsonServers in ${rejected.where})`,
      fix: `remove "majordomus" from disabledMcpjsonServers in ${rejected.where}, or run \`claude mcp reset-project-choices\` in the repository and approve it when asked`,
    };
  }
  const approved = all.find((choice) => choice.values.enableAllProjectMcpServers === true || lists(choice.values, 'enabledMcpjsonServers').includes(SERVER));
  if (approved !== undefined) return { status: 'ok', message: `approved for this project (${approved.where})` };
  return {
    status: 'warn',
    message: 'not approved yet: Claude Code asks once, when it starts in this repository, whether to use the project\'s servers',
    fix: `approve majordomus when Claude Code asks, or add "enabledMcpjsonServers": ["majordomus"] to ${LOCAL_SETTINGS} (your own, not committed)`,
  };
}
