/**
 * `majordomus serve` when it cannot serve, black-box. It exits 13 with the catalogue code on
 * stderr, nothing on stdout, and leaves nothing behind:
 * - an address that is not this machine's (192.0.2.1, TEST-NET-1): the bind fails, and so does
 *   the free-port fallback of an explicit port → MAJ_PORT_UNAVAILABLE naming the address, no lease
 *   and no board file;
 * - a lease that cannot be written (`.ai/local/state` or `.ai/local` a regular file; the tests run
 *   as root, so permissions would not stop a write) → MAJ_LEASE naming the lease path. `mcp`
 *   serves its client alone then (shared-lifetime.test.ts); `serve` has no client to serve.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';

const NOT_LOCAL = '192.0.2.1';
const LEASE_DIR = '.ai/local/state/mcp';

describe('serve refusing to start', () => {
  let repo: FixtureRepo | undefined;

  const fixture = async (files: Record<string, string> = {}): Promise<FixtureRepo> => {
    repo = await createFixtureRepo({ files: { '.ai/repo/rules/r.md': '# R\n\nA rule.\n', ...files } });
    return repo;
  };

  afterEach(async () => {
    await repo?.cleanup();
    repo = undefined;
  });

  it.each(['0', '39217'])(
    'exits 13 with MAJ_PORT_UNAVAILABLE on an address that is not local (--port %s) and leaves no lease',
    async (port) => {
      const { root } = await fixture();
      const result = await runCli(['serve', '--host', NOT_LOCAL, '--port', port], { cwd: root });
      expect(result.code, result.stderr).toBe(13);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`MAJ_PORT_UNAVAILABLE: cannot listen on ${NOT_LOCAL}:${port}`);
      expect(result.stderr).not.toMatch(/serving http/);
      const left = existsSync(join(root, LEASE_DIR)) ? await readdir(join(root, LEASE_DIR)) : [];
      expect(left).toEqual([]);
    },
  );

  it.each(['.ai/local/state', '.ai/local'])('exits 13 with MAJ_LEASE when %s is a regular file, and writes nothing', async (blocked) => {
    const { root } = await fixture({ [blocked]: 'not a directory\n' });
    const result = await runCli(['serve', '--port', '0'], { cwd: root });
    expect(result.code, result.stderr).toBe(13);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`MAJ_LEASE: cannot write the lease ${join(root, LEASE_DIR, 'server.json')}`);
    expect(result.stderr).not.toMatch(/serving http/);
    expect(await readFile(join(root, blocked), 'utf8')).toBe('not a directory\n');
  });
});
