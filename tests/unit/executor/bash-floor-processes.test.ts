/**
 * The floor's masking in processes of its own, from the tools bundled into one script:
 * - as a user who is not root (setpriv to nobody when the tests run as root), where the first
 *   namespace needs a user namespace to mount in: the masks hold, though nobody can read `.env`
 *   outside the tool. The script is world-readable in a folder of its own, since the checkout may
 *   be where nobody cannot enter (a 0700 home, a `mktemp -d` clone);
 * - where masking cannot work (no `unshare` on PATH): bash refuses every command and runs none.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutCoverage } from '../../helpers/coverage-env.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';
import { bundleModule } from '../../helpers/module-bundle.js';

const execFileAsync = promisify(execFile);
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TOOLS_TS = join(PACKAGE_ROOT, 'src/executor/tools/index.ts');

/** Runs bash commands through the built tools in a process of its own; answers their outcomes. */
const RUNNER = `
const { createTools } = await import(process.env.TOOLS_JS);
const { root, commands } = JSON.parse(process.env.RUNNER_INPUT);
const bash = createTools({ root, deny: [] }).find((tool) => tool.name === 'bash');
const context = { root, cwd: root, readFiles: new Set(), signal: new AbortController().signal };
const outcomes = [];
for (const command of commands) outcomes.push(await bash.run({ command }, context));
process.stdout.write(JSON.stringify(outcomes));
`;

interface Outcome {
  ok: boolean;
  output: string;
  refused?: string;
}

const asRoot = process.getuid?.() === 0;
/** The prefix that drops to an ordinary user when we are root; an ordinary user runs as itself. */
const DROP = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];

let checkout: { path: string; cleanup(): Promise<void> };
let home: { path: string; cleanup(): Promise<void> };
/** The folder of the world-readable script of the tools, and the script. */
let toolsDir: { path: string; cleanup(): Promise<void> };
let toolsJs: string;

/**
 * Runs `commands` through the bundled tools in a process of its own, as the user `drop` switches
 * to (not measured: the script is not the checkout's dist/, so no coverage).
 */
async function runTools(commands: string[], env: NodeJS.ProcessEnv, drop: readonly string[]): Promise<Outcome[]> {
  const [file, ...args] = [...drop, process.execPath, '--input-type=module', '-e', RUNNER];
  const { stdout } = await execFileAsync(file as string, args, {
    cwd: checkout.path,
    env: { ...withoutCoverage(env), TOOLS_JS: toolsJs, RUNNER_INPUT: JSON.stringify({ root: checkout.path, commands }) },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return JSON.parse(stdout) as Outcome[];
}

beforeAll(async () => {
  checkout = await makeTempDir('majordomus-floor-user-');
  home = await makeTempDir('majordomus-floor-home-');
  toolsDir = await makeTempDir('majordomus-floor-tools-');
  toolsJs = await bundleModule(TOOLS_TS, toolsDir.path, 'tools');
  await writeFile(join(checkout.path, '.env'), 'SECRET=abc123secretvalue\n');
  await writeFile(join(checkout.path, 'app.txt'), 'app\n');
  await mkdir(join(home.path, '.ssh'));
  await writeFile(join(home.path, '.ssh/id_rsa'), 'SSHKEY-homesecret-0001\n');
  // Readable by everyone, so only the masks can keep nobody from reading them.
  for (const path of [checkout.path, home.path, join(home.path, '.ssh')]) await chmod(path, 0o755);
  for (const path of [join(checkout.path, '.env'), join(checkout.path, 'app.txt'), join(home.path, '.ssh/id_rsa')]) await chmod(path, 0o644);
});

afterAll(async () => {
  await checkout?.cleanup();
  await home?.cleanup();
  await toolsDir?.cleanup();
});

describe('masking as a user who is not root', () => {
  it('can read the protected files outside the tool (so the masks are what hides them)', async () => {
    const [file, ...args] = [...DROP, 'cat', join(checkout.path, '.env'), join(home.path, '.ssh/id_rsa')];
    const { stdout } = await execFileAsync(file as string, args, { encoding: 'utf8' });
    expect(stdout).toBe('SECRET=abc123secretvalue\nSSHKEY-homesecret-0001\n');
  });

  it('shows them empty through bash, and the masks cannot be lifted', async () => {
    const outcomes = await runTools(
      // stderr joined to stdout in the command: the tool reads the two pipes as they come, so
      // cat's complaint about the empty ~/.ssh could otherwise arrive after `end`.
      ["id -u; cat $(printf '.%s' env) ~/.ssh/* app.txt 2>&1; umount $(printf '.%s' env) 2>/dev/null; cat $(printf '.%s' env) 2>&1; echo end"],
      { ...process.env, HOME: home.path },
      DROP,
    );
    const expectedUid = asRoot ? '65534' : String(process.getuid?.());
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]?.output).toMatch(new RegExp(`^${expectedUid}\\n`));
    expect(outcomes[0]?.output).toContain('app\n');
    expect(outcomes[0]?.output).toMatch(/end\n\[exit code 0\]$/);
    expect(outcomes[0]?.output).not.toMatch(/abc123secretvalue|SSHKEY-homesecret|redacted/);
  });
});

describe('where masking cannot work', () => {
  it('refuses every bash command with the reason, and runs none', async () => {
    const outcomes = await runTools(['touch ran-anyway', 'true'], { ...process.env, PATH: join(checkout.path, 'no-such-bin') }, []);
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        ok: false,
        output: 'refused: bash is disabled: the permission floor cannot mask protected files here because unshare (util-linux) is not installed',
        refused: 'bash is disabled: the permission floor cannot mask protected files here because unshare (util-linux) is not installed',
      });
    }
    expect(existsSync(join(checkout.path, 'ran-anyway'))).toBe(false);
  });
});
