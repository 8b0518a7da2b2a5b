/**
 * `majordomus open` — black-box, with the built executable in temporary git repositories:
 * - no live server: exit 12, MAJ_NO_SERVER on stderr naming `majordomus serve`, nothing on stdout
 *   (no lease at all, and a lease left by a dead process);
 * - a live server: `--print` prints exactly `<url>/#token=<token>` of the lease, and the address
 *   opens the live page (GET / for a browser answers the page);
 * - with a display it hands the system's opener (a stand-in `xdg-open` on PATH records what it was
 *   given) a file URL of a 0600 redirect page beside the lease, never the token itself; without
 *   one it prints the address and opens nothing;
 * - from a subdirectory, and with --repo from elsewhere, it finds the same server;
 * - an argument it does not take is a usage error (exit 2).
 */
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import { rawRequest, startServe, type ServeProcess } from '../helpers/serve.js';
import { LEASE_RELATIVE, Scene, SHARED_LAYER } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

describe('majordomus open', () => {
  const scene = new Scene();
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await scene.cleanup();
  });

  it('exits 12 naming `majordomus serve` when no server holds the lease', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const run = await runCli(['open', '--print'], { cwd: repo.root });
    expect(run.code).toBe(12);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('MAJ_NO_SERVER');
    expect(run.stderr).toContain('majordomus serve');
  });

  it('exits 12 when the lease was left by a process that is gone', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const lease = join(repo.root, LEASE_RELATIVE);
    await mkdir(join(lease, '..'), { recursive: true });
    const dead = {
      schema: 'majordomus-mcp-lease/v1',
      pid: 2_147_483_000,
      token: 'deadbeefdeadbeefdeadbeefdeadbeef',
      root: repo.root,
      url: 'http://127.0.0.1:9',
      started_at: new Date(Date.now() - 60_000).toISOString(),
      version: '0.0.0',
    };
    await writeFile(lease, `${JSON.stringify(dead)}\n`, { mode: 0o600 });
    const run = await runCli(['open', '--print'], { cwd: repo.root });
    expect(run.code).toBe(12);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/MAJ_NO_SERVER: no live server for .*: the lease is stale/);
  });

  it('prints the live page\'s address with the lease\'s token, from the root, a subdirectory and --repo', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    server = await startServe({ cwd: repo.root });
    const expected = `${server.url}/#token=${server.token}`;
    const fromRoot = await runCli(['open', '--print'], { cwd: repo.root });
    expect(fromRoot.code).toBe(0);
    expect(fromRoot.stdout).toBe(`${expected}\n`);
    const fromSub = await runCli(['open', '--print'], { cwd: join(repo.root, 'src') });
    expect(fromSub.stdout).toBe(`${expected}\n`);
    const elsewhere = await makeTempDir();
    scene.defer(() => elsewhere.cleanup());
    const fromRepo = await runCli(['--repo', repo.root, 'open', '--print'], { cwd: elsewhere.path });
    expect(fromRepo.stdout).toBe(`${expected}\n`);
    // The address is the page (for a browser).
    const page = await rawRequest({ port: server.port, path: '/', headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });

  it('hands the address to xdg-open when there is a display, and opens nothing without one', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    server = await startServe({ cwd: repo.root });
    const bin = await makeTempDir('majordomus-opener-');
    scene.defer(() => bin.cleanup());
    const record = join(bin.path, 'opened.txt');
    const opener = join(bin.path, 'xdg-open');
    await writeFile(opener, `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\n`);
    await chmod(opener, 0o755);
    const env = { PATH: `${bin.path}:${process.env.PATH ?? ''}`, DISPLAY: ':99', WAYLAND_DISPLAY: undefined };

    const opened = await runCli(['open'], { cwd: repo.root, env });
    expect(opened.code).toBe(0);
    const address = `${server.url}/#token=${server.token}`;
    expect(opened.stdout).toBe(`${address}\n`);
    // The opener gets a file URL, never the token: command lines are readable by every local user.
    const handed = await waitFor(async () => (await readFile(record, 'utf8').catch(() => '')) || null, { what: 'the opener to run' });
    expect(handed).not.toContain(server.token);
    const redirect = fileURLToPath(handed.trim());
    expect(redirect).toBe(join(repo.root, '.ai/local/state/mcp/open.html'));
    expect((await stat(redirect)).mode & 0o777).toBe(0o600);
    expect(await readFile(redirect, 'utf8')).toContain(`<meta http-equiv="refresh" content="0;url=${address}">`);

    await writeFile(record, '');
    const printed = await runCli(['open', '--print'], { cwd: repo.root, env });
    expect(printed.stdout).toBe(`${address}\n`);
    const headless = await runCli(['open'], { cwd: repo.root, env: { ...env, DISPLAY: undefined } });
    expect(headless.code).toBe(0);
    expect(headless.stdout).toBe(`${address}\n`);
    expect(headless.stderr).toContain('no display');
    expect(await readFile(record, 'utf8'), 'neither --print nor a missing display runs the opener').toBe('');
  });

  it('refuses an argument it does not take (exit 2)', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const extra = await runCli(['open', 'now'], { cwd: repo.root });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('MAJ_USAGE');
    const option = await runCli(['open', '--port', '1'], { cwd: repo.root });
    expect(option.code).toBe(2);
  });
});
