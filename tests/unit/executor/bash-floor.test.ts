/**
 * The permission floor end to end through bash, in a checkout holding `.env` (committed, so it is
 * in git history too), `.env.local`, `config/credentials.json` and `deep/dir/id_ed25519`, with a
 * home directory whose `.ssh` and `.aws` hold keys. Whatever the command, no secret value reaches
 * the output: a command naming a protected file is refused; one that reaches it without naming it
 * finds it empty (masking, shown by the absence of any redaction mark); what is only in git
 * history is redacted.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTION_MARK } from '../../../src/floor/redact.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

const SECRETS = ['abc123secretvalue', 'localsecret999', 'jsontoken12345', 'PRIVATEKEYMATERIAL0001', 'SSHKEY-homesecret-0001', 'AWSKEY-homesecret-0002'];

let box: Toolbox;
let home: { path: string; cleanup(): Promise<void> };
const savedHome = process.env.HOME;

beforeAll(async () => {
  home = await makeTempDir('majordomus-home-');
  await mkdir(join(home.path, '.ssh'));
  await writeFile(join(home.path, '.ssh/id_rsa'), 'SSHKEY-homesecret-0001\n');
  await mkdir(join(home.path, '.aws'));
  await writeFile(join(home.path, '.aws/credentials'), '[default]\naws_secret_access_key = AWSKEY-homesecret-0002\n');
  // The masked home directories are found through os.homedir(), which reads HOME.
  process.env.HOME = home.path;
  box = await createToolbox({
    files: {
      '.env': 'SECRET=abc123secretvalue\n',
      '.env.local': 'LOCAL=localsecret999\n',
      'config/credentials.json': '{"token": "jsontoken12345"}\n',
      'deep/dir/id_ed25519': 'PRIVATEKEYMATERIAL0001\n',
      'src/app.ts': 'export const app = 1;\n',
      '.env.example': 'SECRET=\n',
    },
    commit: true,
  });
});

afterAll(async () => {
  process.env.HOME = savedHome;
  await box?.cleanup();
  await home?.cleanup();
});

/** How a command is stopped: refused by name, run against masked files, or redacted after the fact. */
type Stop = 'refused' | 'masked' | 'redacted';

const COMMANDS: [string, Stop, string?][] = [
  ['cat .env', 'refused'],
  ['cat .e*', 'refused'],
  ['cat config/cred*', 'refused'],
  ['find . -name id_ed25519 -exec cat {} \\;', 'refused'],
  ['git show HEAD:.env', 'refused'],
  ['grep -r SECRET .', 'masked'],
  ['grep -rh . --exclude-dir=.git', 'masked'],
  ["cat $(printf '.%s' env)", 'masked'],
  // An encoding redaction cannot see: only masking stops it, so its output is empty.
  ["cat $(printf '.%s' env) $(printf '.%s' env).local | base64", 'masked', '(no output)\n[exit code 0]'],
  ["cp $(printf '.%s' env) copy.txt && cat copy.txt", 'masked'],
  ["cat config/$(printf 'cred%s' entials.json) deep/dir/$(printf 'id_%s' ed25519)", 'masked'],
  ['find . -path ./.git -prune -o -type f -print0 | xargs -0 cat', 'masked'],
  ["umount $(printf '.%s' env); cat $(printf '.%s' env)", 'masked'],
  ["for p in /proc/[0-9]*; do cat $p/root$(pwd)/$(printf '.%s' env) 2>/dev/null; done; echo tried", 'masked'],
  ['ls -A ~/.ssh ~/.aws; cat ~/.ssh/* ~/.aws/c*', 'masked'],
  ["git show HEAD:$(printf '.%s' env)", 'redacted'],
  ['git log -p | cat', 'redacted'],
];

describe('bash behind the permission floor', () => {
  it.each(COMMANDS)('%s: no secret reaches the output (%s)', async (command, stop, exactly) => {
    const outcome = await box.run('bash', { command });
    if (exactly !== undefined) expect(outcome.output).toBe(exactly);
    for (const secret of SECRETS) expect(outcome.output).not.toContain(secret);
    if (stop === 'refused') {
      expect(outcome.ok).toBe(false);
      expect(outcome.refused).toMatch(/^the (command names|glob) .+, protected by the permission floor \(/);
      expect(outcome.output).toBe(`refused: ${outcome.refused}`);
    } else {
      expect(outcome.refused).toBeUndefined();
      expect(outcome.output).toMatch(/\n\[exit code \d+\]$/);
      // Masking leaves nothing to redact; what came from git history needed the redactor.
      if (stop === 'masked') expect(outcome.output).not.toContain(REDACTION_MARK);
      else expect(outcome.output).toContain(REDACTION_MARK);
    }
  });

  it('runs a command that names only files the floor allows, a bare * included', async () => {
    const outcome = await box.run('bash', { command: 'cat .env.example && ls *' });
    expect(outcome.refused).toBeUndefined();
    expect(outcome.output.startsWith('SECRET=\n')).toBe(true);
    // Names are not content: ls lists the protected files, whose content stays masked.
    expect(outcome.output).toMatch(/\nconfig:\ncredentials\.json\n[\s\S]*\[exit code 0\]$/);
  });

  it('leaves the masked files untouched on disk and writable by nothing the command runs', async () => {
    const outcome = await box.run('bash', { command: "echo overwritten > $(printf '.%s' env); echo rc=$?" });
    expect(outcome.output).toMatch(/Read-only file system\nrc=1\n/);
    const read = await box.run('bash', { command: 'cat src/app.ts' });
    expect(read).toEqual({ ok: true, output: 'export const app = 1;\n[exit code 0]' });
  });
});
