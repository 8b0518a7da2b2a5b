/**
 * Environment settings that change what a running process does, black-box:
 * - `MAJORDOMUS_LOG` is a threshold: `debug` adds the debug lines, `info` (the default) shows info
 *   and warnings, `warn` hides the info lines, `error` hides the warnings too but still shows a
 *   failed command's `MAJ_…` line — on `mcp --standalone` over a layer whose repo half is missing
 *   (one warning), and on a `serve` that serves without its `serving http://…` line under `warn`;
 * - `MAJORDOMUS_HTTP_NICE`: the HTTP thread, the pool threads, the harness thread and the layer build worker of a running `serve` run at nice
 *   10 by default and at the given value when set, the main thread and Node's own threads stay
 *   at 0 (read from /proc/<pid>/task/<tid>/stat, field 19); `0` leaves every thread at 0. "0" is
 *   the nice value the test itself runs at, which the server inherits (0 unless run under `nice`);
 * - `MAJORDOMUS_HTTP_PORT` is the port of a server started without one (0: any free port).
 */
import { readdir, readFile } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { startServe, type ServeProcess } from '../helpers/serve.js';
import { waitForLease } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function fixture(files: Record<string, string> = {}): Promise<FixtureRepo> {
  const repo = await createFixtureRepo({ files });
  cleanups.push(repo.cleanup);
  return repo;
}

describe('MAJORDOMUS_LOG', () => {
  const DEBUG = /^majordomus debug: layer: 0 objects/m;
  const INFO = /^majordomus info: serving 0 objects to this client alone/m;
  const WARN = /^majordomus warn: \.ai\/repo cannot be inspected below .+; it serves no objects$/m;

  it.each([
    { level: 'debug', shown: [DEBUG, INFO, WARN], hidden: [] },
    { level: 'info', shown: [INFO, WARN], hidden: [DEBUG] },
    { level: undefined, shown: [INFO, WARN], hidden: [DEBUG] },
    { level: 'warn', shown: [WARN], hidden: [DEBUG, INFO] },
    { level: 'error', shown: [], hidden: [DEBUG, INFO, WARN] },
  ])('at $level shows only the lines at or above it (mcp --standalone)', async ({ level, shown, hidden }) => {
    const repo = await fixture(); // a manifest and no .ai/repo: one warning
    const result = await runCli(['mcp', '--standalone'], { cwd: repo.root, env: { MAJORDOMUS_LOG: level } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    for (const line of shown) expect(result.stderr).toMatch(line);
    for (const line of hidden) expect(result.stderr).not.toMatch(line);
  });

  it('at error still names the code of a failed command', async () => {
    const repo = await fixture();
    const result = await runCli(['capabilities', 'describe', 'no.such'], { cwd: repo.root, env: { MAJORDOMUS_LOG: 'error' } });
    expect(result.code).toBe(12);
    expect(result.stderr).toMatch(/^majordomus error: MAJ_UNKNOWN_CAPABILITY: /m);
  });

  it('at warn serves without its info lines (serve)', async () => {
    const repo = await fixture({ '.ai/repo/rules/r.md': '# R\n\nA rule.\n' });
    const serve: CliProcess = spawnCli(['serve', '--port', '0'], { cwd: repo.root, env: { MAJORDOMUS_LOG: 'warn' } });
    cleanups.push(() => serve.stop());
    const lease = await waitForLease(repo.root, (doc) => doc.url !== null);
    const root = await fetch(`${lease.url}/`);
    expect(root.status).toBe(200);
    await serve.stop();
    expect((await serve.exited).code).toBe(0);
    expect(serve.stderr()).not.toMatch(/serving http|closed http|info:/);
  });
});

describe('MAJORDOMUS_HTTP_NICE', () => {
  /** The nice value of this thread, which the spawned server starts with. */
  const INHERITED = getPriority(0);

  /** Every thread of `pid` and its nice value (field 19 of its stat line). */
  async function threadNices(pid: number): Promise<Array<{ tid: number; nice: number }>> {
    const threads: Array<{ tid: number; nice: number }> = [];
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      let stat: string;
      try {
        stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      } catch {
        continue; // the thread ended between the listing and the read
      }
      // Fields after the command name, which is in parentheses and may hold spaces: field 3 first.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.push({ tid: Number(tid), nice: Number(fields[19 - 3]) });
    }
    return threads;
  }

  /** A `serve` with one pool thread that has answered a request, so both its threads have started. */
  async function servedOnce(nice: string | undefined): Promise<ServeProcess> {
    const repo = await fixture({ '.ai/repo/rules/r.md': '# R\n\nA rule.\n' });
    const server = await startServe({
      cwd: repo.root,
      env: { MAJORDOMUS_POOL_THREADS: '1', MAJORDOMUS_ANSWER_CACHE: '0', MAJORDOMUS_HTTP_NICE: nice },
    });
    cleanups.push(() => server.stop());
    // Answered by the pool thread, through the HTTP thread: both have set their priority by now.
    const answer = await fetch(`${server.loopbackUrl}/api/v1/objects`, { headers: server.auth });
    expect(answer.status).toBe(200);
    return server;
  }

  it.each([
    { nice: undefined, expected: 10 },
    { nice: '5', expected: 5 },
  ])('runs the HTTP, pool, harness and layer build threads at nice $expected (MAJORDOMUS_HTTP_NICE=$nice), the main thread at 0', async ({ nice, expected }) => {
    const server = await servedOnce(nice);
    // The layer build worker starts once the server serves: wait (bounded) for its priority too.
    const lowered = (threads: Array<{ nice: number }>): number[] => threads.map((t) => t.nice).filter((n) => n !== INHERITED);
    const threads = await waitFor(async () => {
      const now = await threadNices(server.child.pid!);
      return lowered(now).length >= 4 ? now : null;
    }, { what: 'four threads at the lowered priority' });
    expect(threads.find((t) => t.tid === server.child.pid)?.nice).toBe(INHERITED);
    expect(lowered(threads)).toEqual([expected, expected, expected, expected]);
    expect(threads.every((t) => t.nice === INHERITED || t.nice === expected)).toBe(true);
  });

  it('keeps every thread at nice 0 with MAJORDOMUS_HTTP_NICE=0', async () => {
    const server = await servedOnce('0');
    const threads = await threadNices(server.child.pid!);
    expect(threads.length).toBeGreaterThan(2);
    expect(threads.filter((t) => t.nice !== INHERITED)).toEqual([]);
  });
});

describe('MAJORDOMUS_HTTP_PORT', () => {
  it('moves a server started without --port off the default port (0: any free port)', async () => {
    const repo = await fixture();
    const serve: CliProcess = spawnCli(['serve'], { cwd: repo.root, env: { MAJORDOMUS_HTTP_PORT: '0' } });
    cleanups.push(() => serve.stop());
    const lease = await waitForLease(repo.root, (doc) => doc.url !== null);
    expect(new URL(lease.url!).port).not.toBe('8741');
    expect((await fetch(`${lease.url}/`)).status).toBe(200);
  });

  it('refuses a malformed value with a usage error naming it', async () => {
    const repo = await fixture();
    const result = await runCli(['serve'], { cwd: repo.root, env: { MAJORDOMUS_HTTP_PORT: '70000' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('MAJORDOMUS_HTTP_PORT="70000" is not an integer 0–65535');
  });
});
