/**
 * `majordomus init`, black-box, in temporary git repositories (the real clients using what it
 * writes, from an installed package, are in init-real-clients.test.ts). Covers:
 * - a fresh repository, run from a subdirectory: a minimal manifest that loads without a
 *   diagnostic, `.ai/local/` git-ignored, and the four configurations starting `majordomus mcp`
 *   (found on PATH: nothing of this machine in a committed file); stdout lists each file as
 *   created, what the clients start, whether it is on PATH here, and the files to commit;
 * - `--npx` writes `npx -y majordomus@<major> mcp`; `--local` this package's launcher by its
 *   absolute real path, and says to keep the files out of git; both together is MAJ_USAGE;
 *   switching from one to the other is a conflict that --force resolves;
 * - an existing .mcp.json with another server, its own indentation and a comment: the other
 *   server, the comment and the layout are kept byte for byte, the entry is added;
 * - twice in a row: the second run reports every file unchanged, "up to date", and leaves every
 *   file byte-identical;
 * - an existing layer is left alone, and the local path it names is the one ignored; a
 *   .gitignore that ignores it already is not touched;
 * - a differing majordomus entry (pointing elsewhere) without --force: MAJ_INIT_CONFLICT (exit
 *   10) naming each file, nothing written; with --force it is replaced, the rest kept;
 * - --dry-run prints a unified diff of every file it would create or change and writes nothing;
 *   `git apply` of that diff gives exactly what init writes (init then reports up to date);
 * - a configuration that cannot be parsed (JSON, TOML) or a majordomus entry of the wrong type:
 *   MAJ_CONFIG_UNPARSABLE (exit 10) naming the file and where, nothing written;
 * - .codex/config.toml with comments and other tables: the table is appended and everything
 *   else is byte-identical; with --force an existing table between others is replaced in place;
 * - the git guard: --guard installs both hooks (a second run says installed already), keeps a
 *   hook of yours running first, and a refused install is exit 10 after the files were written;
 *   --dry-run --guard installs nothing;
 *   non-interactive without a flag prints the one command; on a terminal it asks and a "y"
 *   installs; --guard with --no-guard is MAJ_USAGE;
 * - outside a git work tree without --repo: MAJ_NOT_A_REPOSITORY (exit 12); with --repo a plain
 *   directory is set up and the guard is not offered.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN_JS, cliEnv, runCli, type CliResult } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { withTimeout } from '../helpers/wait.js';


const CONFIGS = ['.mcp.json', '.gemini/settings.json', '.codex/config.toml', 'opencode.json'] as const;
const WRITTEN = ['.ai/manifest.yaml', '.gitignore', ...CONFIGS] as const;
const LAUNCHER = await realpath(new URL('../../bin/majordomus-mcp', import.meta.url));
const MAJOR = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version.split('.')[0];
/** The command every configuration starts by default: found on PATH, the same on every machine. */
const COMMAND = 'majordomus';
const ARGS = ['mcp'];

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A git repository without a layer, holding `files`. */
async function bareRepo(files: Record<string, string> = {}): Promise<FixtureRepo> {
  const repo = await createFixtureRepo({ manifest: null, gitignore: false, commit: false, files });
  cleanups.push(() => repo.cleanup());
  return repo;
}

function init(cwd: string, args: readonly string[] = ['--no-guard']): Promise<CliResult> {
  return runCli(['init', ...args], { cwd });
}

/** Every file below `root` (but .git) with its content. */
async function tree(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of await readdir(root, { recursive: true, withFileTypes: false, encoding: 'utf8' })) {
    if (name === '.git' || name.startsWith('.git/')) continue;
    const path = join(root, name);
    try {
      files[name] = await readFile(path, 'utf8');
    } catch {
      // a directory
    }
  }
  return files;
}

async function read(root: string, path: string): Promise<string> {
  return readFile(join(root, path), 'utf8');
}

/** The report line of `path`: its state. */
function stateOf(stdout: string, path: string): string | undefined {
  return stdout.split('\n').find((line) => line.split(/\s+/)[1] === path)?.split(/\s+/)[0];
}

describe('majordomus init in a fresh repository', () => {
  it('writes a manifest that loads cleanly, ignores .ai/local/, and has all four configurations start `majordomus mcp` from PATH', async () => {
    const repo = await bareRepo({ 'src/deep/code.ts': 'export {};\n' });
    const result = await init(join(repo.root, 'src/deep'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`majordomus init in ${repo.root}`);
    for (const path of WRITTEN) expect(stateOf(result.stdout, path), result.stdout).toBe('created');
    expect(result.stdout).toContain('git guard: not installed; to install it later: majordomus guard install');
    // The test's PATH has no majordomus: init says so, and how to get one.
    expect(result.stdout).toContain('clients start: majordomus mcp (NOT on PATH here: install it with npm install -g majordomus, or run init --npx)');
    expect(result.stdout).toContain('commit: .ai/manifest.yaml .gitignore .mcp.json .gemini/settings.json .codex/config.toml opencode.json');

    const inspect = await runCli(['mcp', '--inspect', '--discovery', 'filesystem'], { cwd: join(repo.root, 'src/deep') });
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(inspect.stdout).toContain(`root: ${repo.root}`);
    expect(inspect.stdout).toContain('state: ok');
    expect(inspect.stdout).toContain('diagnostics: 0');
    expect(await read(repo.root, '.gitignore')).toBe('.ai/local/\n');

    const claude = JSON.parse(await read(repo.root, '.mcp.json'));
    expect(claude).toEqual({ mcpServers: { majordomus: { type: 'stdio', command: COMMAND, args: ARGS, env: {} } } });
    const gemini = JSON.parse(await read(repo.root, '.gemini/settings.json'));
    expect(gemini.mcpServers.majordomus).toEqual({ command: COMMAND, args: ARGS, timeout: 600_000 });
    const codex = parseToml(await read(repo.root, '.codex/config.toml'));
    expect(codex).toEqual({ mcp_servers: { majordomus: { command: COMMAND, args: ARGS, startup_timeout_sec: 120, required: true } } });
    const opencode = JSON.parse(await read(repo.root, 'opencode.json'));
    expect(opencode).toEqual({ $schema: 'https://opencode.ai/config.json', mcp: { majordomus: { type: 'local', command: [COMMAND, ...ARGS], enabled: true } } });
    // Nothing of this machine: no absolute path, no home, no package location.
    for (const path of CONFIGS) expect(await read(repo.root, path)).not.toMatch(/"\/|= "\/|\/tmp\/|\/root\/|\/home\//);
  });

  it('says where majordomus is on PATH when it is there', async () => {
    const repo = await bareRepo();
    await mkdir(join(repo.root, 'tools'));
    await writeFile(join(repo.root, 'tools/majordomus'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const result = await runCli(['init', '--no-guard'], { cwd: repo.root, env: { PATH: `${join(repo.root, 'tools')}:${process.env.PATH ?? ''}` } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`clients start: majordomus mcp (on PATH here: ${join(repo.root, 'tools/majordomus')})`);
  });

  it('--npx writes `npx -y majordomus@<major> mcp` in all four configurations', async () => {
    const repo = await bareRepo();
    const result = await init(repo.root, ['--npx', '--no-guard']);
    expect(result.code, result.stderr).toBe(0);
    const args = ['-y', `majordomus@${MAJOR}`, 'mcp'];
    expect(result.stdout).toContain(`clients start: npx ${args.join(' ')}\n`);
    expect(result.stdout).toContain('commit: .ai/manifest.yaml');
    expect(JSON.parse(await read(repo.root, '.mcp.json')).mcpServers.majordomus).toEqual({ type: 'stdio', command: 'npx', args, env: {} });
    expect(JSON.parse(await read(repo.root, '.gemini/settings.json')).mcpServers.majordomus).toEqual({ command: 'npx', args, timeout: 600_000 });
    expect(parseToml(await read(repo.root, '.codex/config.toml'))).toEqual({ mcp_servers: { majordomus: { command: 'npx', args, startup_timeout_sec: 120, required: true } } });
    expect(JSON.parse(await read(repo.root, 'opencode.json')).mcp.majordomus).toEqual({ type: 'local', command: ['npx', ...args], enabled: true });
  });

  it('--local names this package\'s launcher by its absolute real path and says to keep the files out of git', async () => {
    const repo = await bareRepo();
    const result = await init(repo.root, ['--local', '--no-guard']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`clients start: ${LAUNCHER} (this machine's launcher, by its absolute path: keep the client configurations out of git)`);
    expect(result.stdout).not.toContain('commit:');
    expect(JSON.parse(await read(repo.root, '.mcp.json')).mcpServers.majordomus).toEqual({ type: 'stdio', command: LAUNCHER, args: [], env: {} });
    expect(JSON.parse(await read(repo.root, '.gemini/settings.json')).mcpServers.majordomus).toEqual({ command: LAUNCHER, args: [], timeout: 600_000 });
    expect(parseToml(await read(repo.root, '.codex/config.toml'))).toEqual({ mcp_servers: { majordomus: { command: LAUNCHER, args: [], startup_timeout_sec: 120, required: true } } });
    expect(JSON.parse(await read(repo.root, 'opencode.json')).mcp.majordomus).toEqual({ type: 'local', command: [LAUNCHER], enabled: true });
    expect(LAUNCHER.startsWith('/')).toBe(true);
  });

  it('refuses --npx with --local (MAJ_USAGE), and switching styles is a conflict --force resolves', async () => {
    const repo = await bareRepo();
    const both = await init(repo.root, ['--npx', '--local']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('MAJ_USAGE: --npx and --local contradict each other');
    expect(await tree(repo.root)).toEqual({});
    expect((await init(repo.root, ['--local', '--no-guard'])).code).toBe(0);
    const portable = await init(repo.root);
    expect(portable.code).toBe(10);
    expect(portable.stderr).toContain('MAJ_INIT_CONFLICT');
    const forced = await init(repo.root, ['--force', '--no-guard']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(await read(repo.root, '.mcp.json')).mcpServers.majordomus.command).toBe(COMMAND);
  });

  it('changes nothing the second time: every file unchanged, "up to date", bytes identical', async () => {
    const repo = await bareRepo({ '.mcp.json': '{"mcpServers": {"other": {"command": "other-server"}}}\n' });
    const first = await init(repo.root);
    expect(first.code, first.stderr).toBe(0);
    expect(stateOf(first.stdout, '.mcp.json')).toBe('updated');
    const before = await tree(repo.root);

    const second = await init(join(repo.root, '.ai'));
    expect(second.code, second.stderr).toBe(0);
    for (const path of WRITTEN) expect(stateOf(second.stdout, path), second.stdout).toBe('unchanged');
    expect(second.stdout).toContain('up to date: nothing to change');
    expect(await tree(repo.root)).toEqual(before);
  });
});

describe('majordomus init merging into existing files', () => {
  it('keeps another server in .mcp.json with its comment, key order and 4-space indentation', async () => {
    const original = [
      '{',
      '    // the team\'s servers',
      '    "mcpServers": {',
      '        "other": {"command": "other-server", "args": ["--fast"]}, // keep me',
      '        "zeta": {',
      '            "command": "zeta"',
      '        }',
      '    },',
      '    "extra": true',
      '}',
      '',
    ].join('\n');
    const repo = await bareRepo({ '.mcp.json': original });
    const result = await init(repo.root);
    expect(result.code, result.stderr).toBe(0);
    expect(stateOf(result.stdout, '.mcp.json')).toBe('updated');
    const entry = [
      ',',
      '        "majordomus": {',
      '            "type": "stdio",',
      '            "command": "majordomus",',
      '            "args": [',
      '                "mcp"',
      '            ],',
      '            "env": {}',
      '        }',
    ].join('\n');
    const at = original.indexOf('        }\n    },') + '        }'.length;
    expect(await read(repo.root, '.mcp.json')).toBe(`${original.slice(0, at)}${entry}${original.slice(at)}`);
  });

  it('leaves an existing layer alone and ignores the local path its manifest names, once', async () => {
    const manifest = 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/private}\n';
    const repo = await bareRepo({ '.ai/manifest.yaml': manifest, '.gitignore': 'node_modules/\n/.ai/private\n' });
    const result = await init(repo.root);
    expect(result.code, result.stderr).toBe(0);
    expect(stateOf(result.stdout, '.ai/manifest.yaml')).toBe('unchanged');
    expect(stateOf(result.stdout, '.gitignore')).toBe('unchanged');
    expect(await read(repo.root, '.ai/manifest.yaml')).toBe(manifest);
    expect(await read(repo.root, '.gitignore')).toBe('node_modules/\n/.ai/private\n');
  });

  it('writes a whole document into an empty .mcp.json and merges into an existing opencode.jsonc', async () => {
    const repo = await bareRepo({ '.mcp.json': '', 'opencode.jsonc': '{\n  // mine\n  "theme": "dark",\n}\n' });
    const result = await init(repo.root);
    expect(result.code, result.stderr).toBe(0);
    expect(stateOf(result.stdout, '.mcp.json')).toBe('updated');
    expect(JSON.parse(await read(repo.root, '.mcp.json')).mcpServers.majordomus.command).toBe(COMMAND);
    expect(stateOf(result.stdout, 'opencode.jsonc')).toBe('updated');
    expect(existsSync(join(repo.root, 'opencode.json'))).toBe(false);
    expect(await read(repo.root, 'opencode.jsonc')).toBe(
      '{\n  // mine\n  "theme": "dark",\n  "mcp": {\n    "majordomus": {\n      "type": "local",\n      "command": [\n        "majordomus",\n        "mcp"\n      ],\n      "enabled": true\n    }\n  }\n}\n',
    );
  });

  it('appends the local path to a .gitignore that lacks it, ending its last line first', async () => {
    const repo = await bareRepo({ '.gitignore': 'node_modules/\ndist' });
    const result = await init(repo.root);
    expect(result.code, result.stderr).toBe(0);
    expect(stateOf(result.stdout, '.gitignore')).toBe('updated');
    expect(await read(repo.root, '.gitignore')).toBe('node_modules/\ndist\n.ai/local/\n');
  });

  it('appends [mcp_servers.majordomus] to .codex/config.toml keeping its comments and tables byte for byte', async () => {
    const original = '# my codex settings\nmodel = "o3"  # the model\n\n[mcp_servers.other]\ncommand = "other"\n# trailing note\n';
    const repo = await bareRepo({ '.codex/config.toml': original });
    const result = await init(repo.root);
    expect(result.code, result.stderr).toBe(0);
    expect(stateOf(result.stdout, '.codex/config.toml')).toBe('updated');
    const table = '[mcp_servers.majordomus]\ncommand = "majordomus"\nargs = ["mcp"]\nstartup_timeout_sec = 120\nrequired = true\n';
    expect(await read(repo.root, '.codex/config.toml')).toBe(`${original}\n${table}`);
  });
});

describe('majordomus init with a majordomus entry of somebody else', () => {
  const theirs = '{\n  "mcpServers": {\n    "majordomus": {"command": "/opt/elsewhere/majordomus-mcp"},\n    "other": {"command": "x"}\n  }\n}\n';
  const codexTheirs = '# top\n[mcp_servers.majordomus]\ncommand = "elsewhere"  # theirs\n\n# about other\n[mcp_servers.other]\ncommand = "x"\n';

  it('refuses without --force: MAJ_INIT_CONFLICT naming each file, and a command path that does not exist here; nothing written', async () => {
    const repo = await bareRepo({ '.mcp.json': theirs, '.codex/config.toml': codexTheirs });
    const before = await tree(repo.root);
    const result = await init(repo.root);
    expect(result.code).toBe(10);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_INIT_CONFLICT');
    expect(result.stderr).toContain('.mcp.json: "mcpServers.majordomus" is already {"command":"/opt/elsewhere/majordomus-mcp"}, whose command /opt/elsewhere/majordomus-mcp does not exist on this machine');
    // A name, not a path: nothing to say about this machine.
    expect(result.stderr).toContain('.codex/config.toml: [mcp_servers.majordomus] is already {"command":"elsewhere"}\n');
    expect(result.stderr).toContain('--force');
    expect(await tree(repo.root)).toEqual(before);
  });

  it('replaces it with --force, keeping the other server and, in TOML, every other line', async () => {
    const repo = await bareRepo({ '.mcp.json': theirs, '.codex/config.toml': codexTheirs });
    const result = await init(repo.root, ['--force', '--no-guard']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /updated\s+\.mcp\.json\s+\(Claude Code; replaced the majordomus entry that was there \(--force\), whose command \/opt\/elsewhere\/majordomus-mcp does not exist on this machine\)/,
    );
    expect(result.stdout).toMatch(/updated\s+\.codex\/config\.toml\s+\(Codex; replaced the majordomus entry that was there \(--force\)\)/);
    const claude = JSON.parse(await read(repo.root, '.mcp.json'));
    expect(claude.mcpServers).toEqual({ majordomus: { type: 'stdio', command: COMMAND, args: ARGS, env: {} }, other: { command: 'x' } });
    const table = '[mcp_servers.majordomus]\ncommand = "majordomus"\nargs = ["mcp"]\nstartup_timeout_sec = 120\nrequired = true';
    expect(await read(repo.root, '.codex/config.toml')).toBe(`# top\n${table}\n\n# about other\n[mcp_servers.other]\ncommand = "x"\n`);
    const again = await init(repo.root);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('up to date');
  });
});

describe('majordomus init --dry-run', () => {
  it('prints a unified diff of every file it would create or change and writes nothing; git apply of it gives what init writes', async () => {
    const repo = await bareRepo({ '.mcp.json': '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n' });
    const before = await tree(repo.root);
    const result = await init(repo.root, ['--dry-run']);
    expect(result.code, result.stderr).toBe(0);
    expect(await tree(repo.root)).toEqual(before);
    expect(result.stdout).toContain('--- /dev/null\n+++ b/.ai/manifest.yaml\n');
    expect(result.stdout).toContain('--- a/.mcp.json\n+++ b/.mcp.json\n');
    expect(result.stdout).toContain('+      "command": "majordomus",');
    for (const path of ['.gitignore', '.gemini/settings.json', '.codex/config.toml', 'opencode.json']) expect(result.stdout).toContain(`+++ b/${path}\n`);
    expect(result.stderr).toContain('dry run: would update .mcp.json');
    expect(result.stderr).toContain('nothing was written');

    const apply = spawn('git', ['apply'], { cwd: repo.root, stdio: ['pipe', 'pipe', 'pipe'] });
    apply.stdin.end(result.stdout);
    let applyErr = '';
    apply.stderr.on('data', (chunk: Buffer) => (applyErr += chunk.toString()));
    const code = await withTimeout(new Promise<number | null>((resolve) => apply.once('close', resolve)), 30_000, 'git apply');
    expect(code, applyErr).toBe(0);
    const after = await init(repo.root);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain('up to date: nothing to change');
  });

  it('prints nothing when everything is up to date', async () => {
    const repo = await bareRepo();
    expect((await init(repo.root)).code).toBe(0);
    const result = await init(repo.root, ['--dry-run', '--no-guard']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
  });
});

describe('majordomus init refusing a file it cannot parse', () => {
  it.each([
    ['.gemini/settings.json', '{\n  "mcpServers": {\n    "x": {"command": "y"}\n  \n', /\.gemini\/settings\.json: not valid JSON: .* at line \d+, column \d+/],
    ['.mcp.json', '["not", "an", "object"]\n', /\.mcp\.json: the top level must be a JSON object/],
    ['opencode.json', '{"mcp": []}\n', /opencode\.json: "mcp" must be an object, not array/],
    ['.codex/config.toml', '[mcp_servers\ncommand = 1\n', /\.codex\/config\.toml: not valid TOML: /],
    ['.codex/config.toml', 'mcp_servers = { other = { command = "x" } }\n', /\.codex\/config\.toml: adding \[mcp_servers\.majordomus\] as text would not give the intended document/],
  ])('%s holding %j: MAJ_CONFIG_UNPARSABLE naming it, nothing written', async (path, content, message) => {
    const repo = await bareRepo({ [path]: content });
    const before = await tree(repo.root);
    const result = await init(repo.root);
    expect(result.code).toBe(10);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('MAJ_CONFIG_UNPARSABLE');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('nothing was written');
    expect(await tree(repo.root)).toEqual(before);
  });

  it('refuses a broken manifest of an existing layer (MAJ_MANIFEST_INVALID), nothing written', async () => {
    const repo = await bareRepo({ '.ai/manifest.yaml': 'schema: ai-repository/v1\nunknown: 1\n' });
    const result = await init(repo.root);
    expect(result.code).toBe(10);
    expect(result.stderr).toContain('MAJ_MANIFEST_INVALID');
    expect(existsSync(join(repo.root, '.mcp.json'))).toBe(false);
  });
});

describe('majordomus init and the git guard', () => {
  it('--guard installs both hooks; a second run says installed already', async () => {
    const repo = await bareRepo();
    const result = await init(repo.root, ['--guard']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('git guard: installed (pre-commit, pre-push)');
    for (const hook of ['pre-commit', 'pre-push']) {
      expect((await read(repo.root, `.git/hooks/${hook}`)).split('\n')[1]).toBe('# majordomus git guard');
    }
    const again = await init(repo.root, ['--guard']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('git guard: installed already');
    expect(again.stdout).toContain('up to date: nothing to change');
  });

  it('--guard keeps a hook of yours running first, and a guard it cannot install safely is exit 10 with the files written', async () => {
    const repo = await bareRepo();
    await mkdir(join(repo.root, '.git/hooks'), { recursive: true });
    await writeFile(join(repo.root, '.git/hooks/pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const moved = await init(repo.root, ['--guard']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain('git guard: installed (pre-commit, pre-push); your own pre-commit hook still runs first (moved to <name>.user)');
    expect(await read(repo.root, '.git/hooks/pre-commit.user')).toBe('#!/bin/sh\nexit 0\n');

    const other = await bareRepo();
    await mkdir(join(other.root, '.git/hooks'), { recursive: true });
    await writeFile(join(other.root, '.git/hooks/pre-push'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    await writeFile(join(other.root, '.git/hooks/pre-push.user'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const refused = await init(other.root, ['--guard']);
    expect(refused.code).toBe(10);
    expect(refused.stdout).toContain('git guard: NOT installed: ');
    expect(refused.stderr).toContain('the git guard was not installed');
    expect(existsSync(join(other.root, '.mcp.json'))).toBe(true);
  });

  it('--dry-run --guard says it would install it and installs nothing', async () => {
    const repo = await bareRepo();
    const result = await init(repo.root, ['--dry-run', '--guard']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('dry run: git guard: would be installed; nothing was written');
    expect(existsSync(join(repo.root, '.git/hooks/pre-commit'))).toBe(false);
  });

  it('without a flag and without a terminal prints the one command that installs it', async () => {
    const repo = await bareRepo();
    const result = await init(repo.root, []);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('git guard: not installed; to install it: majordomus guard install');
    expect(existsSync(join(repo.root, '.git/hooks/pre-commit'))).toBe(false);
  });

  it('on a terminal asks, and installs on "y"', async () => {
    const repo = await bareRepo();
    // script(1) gives the command a pseudo-terminal; the answer is typed once the question shows.
    const child = spawn('script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN_JS)} init`, '/dev/null'], {
      cwd: repo.root,
      env: cliEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!answered && output.includes('[y/N]')) {
        answered = true;
        child.stdin.write('y\n');
      }
    });
    const code = await withTimeout(new Promise<number | null>((resolve) => child.once('close', resolve)), 60_000, 'init on a terminal').finally(() => child.kill());
    expect(code, output).toBe(0);
    expect(output).toContain('Install the git guard');
    expect(output).toContain('git guard: installed (pre-commit, pre-push)');
    expect((await read(repo.root, '.git/hooks/pre-commit')).split('\n')[1]).toBe('# majordomus git guard');
  });

  it('refuses --guard with --no-guard (MAJ_USAGE), and arguments', async () => {
    const repo = await bareRepo();
    const both = await init(repo.root, ['--guard', '--no-guard']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('MAJ_USAGE: --guard and --no-guard contradict each other');
    const extra = await init(repo.root, ['here']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('init takes no arguments, not "here"');
    expect(await tree(repo.root)).toEqual({});
  });
});

describe('majordomus init outside a git work tree', () => {
  it('without --repo: MAJ_NOT_A_REPOSITORY (exit 12), nothing written', async () => {
    const dir = await makeTempDir();
    cleanups.push(dir.cleanup);
    const result = await init(dir.path);
    expect(result.code).toBe(12);
    expect(result.stderr).toContain('MAJ_NOT_A_REPOSITORY');
    expect(result.stderr).toContain('--repo DIR');
    expect(await readdir(dir.path)).toEqual([]);
  });

  it('with --repo: sets the directory up and does not offer the guard', async () => {
    const dir = await makeTempDir();
    cleanups.push(dir.cleanup);
    await mkdir(join(dir.path, 'project'));
    const result = await runCli(['--repo', 'project', 'init'], { cwd: dir.path });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('git guard: not offered (not a git work tree)');
    for (const path of WRITTEN) expect(existsSync(join(dir.path, 'project', path))).toBe(true);
    const guard = await runCli(['--repo', 'project', 'init', '--guard'], { cwd: dir.path });
    expect(guard.code).toBe(12);
    expect(guard.stderr).toContain('MAJ_NOT_A_REPOSITORY');
    const missing = await runCli(['--repo', 'nowhere', 'init'], { cwd: dir.path });
    expect(missing.code).toBe(12);
    expect(missing.stderr).toContain('--repo nowhere');
    await writeFile(join(dir.path, 'file'), '');
    const file = await runCli(['--repo', 'file', 'init'], { cwd: dir.path });
    expect(file.code).toBe(12);
    expect(file.stderr).toContain('--repo file: not a directory');
  });
});
