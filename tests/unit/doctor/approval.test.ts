/**
 * How the doctor reads each client's record of approval or trust (src/doctor/approval-*.ts), with
 * a throwaway HOME:
 * - Gemini CLI: the longest rule containing the folder wins; TRUST_PARENT trusts the rule's
 *   parent; DO_NOT_TRUST fails; folder trust switched off, or GEMINI_CLI_TRUST_WORKSPACE=true,
 *   trusts; =false or restricted mode fails; GEMINI_CLI_TRUSTED_FOLDERS_PATH moves the file;
 * - Claude Code: a rejection anywhere wins over an approval; enableAllProjectMcpServers in the
 *   user's settings approves; CLAUDE_CONFIG_DIR moves its state file;
 * - Codex: CODEX_HOME moves its config; an unreadable config fails; no entry warns;
 * - opencode needs nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalFor } from '../../../src/doctor/approval.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function home(files: Record<string, string> = {}): Promise<string> {
  const dir = await makeTempDir('majordomus-approval-');
  cleanups.push(dir.cleanup);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir.path, path, '..'), { recursive: true });
    await writeFile(join(dir.path, path), text);
  }
  return dir.path;
}

const ROOT = '/work/team/repo';

describe('Gemini CLI trust', () => {
  it.each([
    [{ '/work': 'TRUST_FOLDER' }, 'ok'],
    [{ '/work': 'TRUST_FOLDER', '/work/team/repo': 'DO_NOT_TRUST' }, 'fail'],
    [{ '/work/team': 'DO_NOT_TRUST', '/work/team/repo/x': 'TRUST_FOLDER' }, 'fail'],
    [{ '/work/team/sibling': 'TRUST_PARENT' }, 'ok'],
    [{ '/elsewhere': 'TRUST_FOLDER' }, 'warn'],
    [{}, 'warn'],
  ] as const)('rules %j: %s', async (rules, status) => {
    const dir = await home({ '.gemini/trustedFolders.json': JSON.stringify(rules) });
    expect((await approvalFor('gemini', ROOT, { HOME: dir })).status).toBe(status);
  });

  it('follows the variables and the folderTrust setting', async () => {
    const dir = await home({ 'moved.json': JSON.stringify({ [ROOT]: 'TRUST_FOLDER' }), '.gemini/settings.json': '{}' });
    expect((await approvalFor('gemini', ROOT, { HOME: dir, GEMINI_CLI_TRUSTED_FOLDERS_PATH: join(dir, 'moved.json') })).status).toBe('ok');
    expect((await approvalFor('gemini', ROOT, { HOME: dir, GEMINI_CLI_TRUST_WORKSPACE: 'true' })).status).toBe('ok');
    expect((await approvalFor('gemini', ROOT, { HOME: dir, GEMINI_CLI_TRUST_WORKSPACE: 'false' })).status).toBe('fail');
    expect((await approvalFor('gemini', ROOT, { HOME: dir, GEMINI_RESTRICTED_MODE: 'true' })).status).toBe('fail');
    const off = await home({ '.gemini/settings.json': '{\n  // mine\n  "security": {"folderTrust": {"enabled": false}}\n}\n' });
    expect(await approvalFor('gemini', ROOT, { HOME: off })).toMatchObject({ status: 'ok', message: expect.stringContaining('folder trust is off') });
  });

  it('fails on a trusted-folders file it cannot parse (Gemini CLI refuses to start with it)', async () => {
    const dir = await home({ '.gemini/trustedFolders.json': '{not json' });
    expect((await approvalFor('gemini', ROOT, { HOME: dir })).status).toBe('fail');
  });
});

describe('Claude Code approval', () => {
  it('lets a rejection win over an approval, wherever each is recorded', async () => {
    const dir = await home({
      '.claude.json': JSON.stringify({ projects: { [ROOT]: { enabledMcpjsonServers: ['majordomus'] } } }),
      '.claude/settings.json': JSON.stringify({ disabledMcpjsonServers: ['majordomus'] }),
    });
    expect((await approvalFor('claude', ROOT, { HOME: dir })).status).toBe('fail');
  });

  it('approves through enableAllProjectMcpServers in the user settings, and finds CLAUDE_CONFIG_DIR', async () => {
    const dir = await home({ 'config/settings.json': JSON.stringify({ enableAllProjectMcpServers: true }) });
    expect((await approvalFor('claude', ROOT, { HOME: dir })).status).toBe('warn');
    expect(await approvalFor('claude', ROOT, { HOME: dir, CLAUDE_CONFIG_DIR: join(dir, 'config') })).toMatchObject({ status: 'ok', message: expect.stringContaining(join(dir, 'config/settings.json')) });
    const state = await home({ 'config/.claude.json': JSON.stringify({ projects: { [ROOT]: { enabledMcpjsonServers: ['majordomus'] } } }) });
    expect((await approvalFor('claude', ROOT, { HOME: state, CLAUDE_CONFIG_DIR: join(state, 'config') })).status).toBe('ok');
  });
});

describe('Codex trust', () => {
  it('reads CODEX_HOME, warns without a choice and fails on a config it cannot parse', async () => {
    const dir = await home({ 'codex/config.toml': `[projects.${JSON.stringify(ROOT)}]\ntrust_level = "trusted"\n`, '.codex/config.toml': 'model = "x"\n' });
    expect((await approvalFor('codex', ROOT, { HOME: dir })).status).toBe('warn');
    expect((await approvalFor('codex', ROOT, { HOME: dir, CODEX_HOME: join(dir, 'codex') })).status).toBe('ok');
    const broken = await home({ '.codex/config.toml': '[projects\n' });
    expect((await approvalFor('codex', ROOT, { HOME: broken })).status).toBe('fail');
  });
});

describe('opencode', () => {
  it('needs no approval', async () => {
    expect((await approvalFor('opencode', ROOT, { HOME: '/nonexistent' })).status).toBe('ok');
  });
});
