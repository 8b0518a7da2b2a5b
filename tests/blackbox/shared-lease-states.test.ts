/**
 * Whatever a lease file holds, the next `mcp` gets a server — black-box, built executable,
 * temporary git repositories, lease files written by the test. Covers:
 * - a lease left by a server killed with SIGKILL is stale and taken over; the log names `stale`,
 *   the path and why (invariants 6 and 8);
 * - a lease copied from another checkout, naming a live server of that checkout, is stale here:
 *   the next process takes it over instead of attaching to the wrong repository (invariants 1, 6);
 * - a corrupt lease (not JSON), a lease of another schema, a directory where the file should be,
 *   an old empty file, a URL-less lease whose process is gone, and a URL-less lease of a live
 *   process older than the bind grace are each taken over, logging what was found (invariant 6);
 * - a young URL-less lease of a live process that never binds is waited for, then taken over as
 *   abandoned once the bind grace passes — within the 20 s bound of the election (invariant 6);
 * - every take-over serves: the new lease names the new process, its URL answers as leaseholder,
 *   its tools answer; no tracked file changes (invariant 5).
 */
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../helpers/wait.js';
import {
  LEASE_SCHEMA,
  RULE_URI,
  SERVING_HTTP,
  SHARED_LAYER,
  Scene,
  leasePath,
  literally,
  peersVia,
  toolOutput,
  readLeaseDoc,
  rootOf,
  waitForLease,
  waitForSettledLease,
  waitForLog,
  type SharedClient,
} from '../helpers/shared.js';

/** The bind grace: how long a live process's URL-less lease is waited for (SPEC §6). */
const BIND_GRACE_S = 15;
const MINUTE_AGO = () => new Date(Date.now() - 60_000);

/** A pid no process has: above the kernel's pid_max. */
const DEAD_PID = 4_194_304 + 17;

function v1(root: string, fields: Record<string, unknown>): string {
  return `${JSON.stringify({ schema: LEASE_SCHEMA, pid: process.pid, token: 'a'.repeat(32), root, url: null, started_at: new Date().toISOString(), version: '0.1.0', ...fields }, null, 2)}\n`;
}

describe('lease states the election takes over', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  /**
   * Asserts that `client` now serves the checkout: it holds a lease with its pid and answers.
   * Its peer id continues after the ids the taken-over server recorded (its board's `peers_issued`).
   */
  async function expectServes(root: string, client: SharedClient, peerId = 'p1'): Promise<void> {
    await waitForLog(client.stderr, SERVING_HTTP);
    const lease = await waitForLease(root, (doc) => doc.pid === client.pid);
    expect(lease).toMatchObject({ schema: LEASE_SCHEMA, root, pid: client.pid });
    expect((await rootOf(lease.url as string)).leaseholder).toBe(true);
    const got = await toolOutput<{ uri: string }>(client.client, 'majordomus_get', { uri: RULE_URI });
    expect(got.uri).toBe(RULE_URI);
    expect((await peersVia(client.client)).you).toBe(peerId);
  }

  it('takes over the lease a killed server left behind, naming it stale and its path', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const first = await scene.client(repo.root, { name: 'first' });
    // Settled: the saved board records the peer it issued (p1) before the server dies.
    const old = await waitForSettledLease(repo.root, (board) => board.peers_issued === 1);
    process.kill(first.pid, 'SIGKILL');
    await waitFor(() => !isAlive(first.pid), { what: 'the killed server to be gone' });
    expect(await readLeaseDoc(repo.root)).toEqual(old);

    const next = await scene.client(repo.root, { name: 'next' });
    const found = await waitForLog(next.stderr, /found a (\w+) lease at (\S+) \((.+)\); taking it over/);
    expect(found[1]).toBe('stale');
    expect(found[2]).toBe(leasePath(repo.root));
    expect(found[3]).toContain(`${old.url} does not answer`);
    // The killed server had issued p1; a bridge of it may come back claiming it.
    await expectServes(repo.root, next, 'p2');
  });

  it('takes over a lease copied from another checkout instead of attaching to that checkout', async () => {
    const other = await scene.repo({ files: SHARED_LAYER });
    const otherOwner = await scene.client(other.root, { name: 'other-checkout' });
    const otherLease = await waitForLease(other.root);
    const repo = await scene.repo({ files: SHARED_LAYER });
    await mkdir(dirname(leasePath(repo.root)), { recursive: true });
    await writeFile(leasePath(repo.root), `${JSON.stringify(otherLease, null, 2)}\n`, { mode: 0o600 });

    const client = await scene.client(repo.root, { name: 'here' });
    const found = await waitForLog(client.stderr, /found a (\w+) lease at (\S+) \((.+)\); taking it over/);
    expect(found[1]).toBe('stale');
    expect(found[3]).toBe(`it names another checkout (${other.root})`);
    // Another checkout's board is not this one's: numbering starts afresh.
    await expectServes(repo.root, client, 'p1');
    // The other checkout's server saw no one from here.
    expect((await peersVia(otherOwner.client)).peers.map((p) => p.client.name)).toEqual(['other-checkout']);
  });

  /** `{age}` in a detail stands for the seconds the product measured (captured). */
  const detailPattern = (detail: string): string => literally(detail).source.replace(literally('{age}').source, '(\\d+)');

  const STATES = [
    {
      what: 'a file that is not JSON',
      write: async (path: string) => writeFile(path, '{"schema": "majordomus-mcp-lease/v1", "pid": 1'),
      kind: 'corrupt',
      detail: 'not JSON',
    },
    {
      what: 'a lease of another schema',
      write: async (path: string) => writeFile(path, JSON.stringify({ schema: 'someone-else/v9', pid: process.pid, url: 'http://127.0.0.1:9' })),
      kind: 'corrupt',
      detail: 'schema "someone-else/v9", not majordomus-mcp-lease/v1',
    },
    {
      what: 'a directory where the file should be',
      write: async (path: string) => mkdir(path),
      kind: 'corrupt',
      detail: 'a directory, not a file',
    },
    {
      what: 'an empty file a minute old',
      write: async (path: string) => {
        await writeFile(path, '');
        await utimes(path, MINUTE_AGO(), MINUTE_AGO());
      },
      kind: 'empty',
      detail: 'empty for {age} s',
    },
    {
      what: 'a URL-less lease whose process is gone',
      write: async (path: string, root: string) => writeFile(path, v1(root, { pid: DEAD_PID })),
      kind: 'stale',
      detail: `its process ${DEAD_PID} is gone before binding`,
    },
    {
      what: 'a URL-less lease of a live process, a minute old',
      write: async (path: string, root: string) => {
        await writeFile(path, v1(root, { pid: process.pid, started_at: MINUTE_AGO().toISOString() }));
        await utimes(path, MINUTE_AGO(), MINUTE_AGO());
      },
      kind: 'abandoned',
      detail: `no URL {age} s after it was taken by process ${process.pid}`,
    },
  ] as const;

  it.each(STATES)('takes over $what, logging it as $kind and leaving nothing else behind', async ({ write, kind, detail }) => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const path = leasePath(repo.root);
    await mkdir(dirname(path), { recursive: true });
    await write(path, repo.root);

    const client = await scene.client(repo.root, { name: `after-${kind}` });
    const found = await waitForLog(client.stderr, new RegExp(`found a ${kind} lease at ${literally(path).source} \\(${detailPattern(detail)}\\); taking it over`));
    // An age is the file's age when the election judged it: a minute and the time to get there.
    if (found[1] !== undefined) expect(Number(found[1]), found[0]).toBeGreaterThanOrEqual(60);
    // Within the election's bound: an election past its deadline serves alone, and expectServes
    // wants the shared server (a wall clock here would also time the spawn).
    await expectServes(repo.root, client);
    // Nothing but the lease and the saved board is left in its directory (once the server's
    // save of its board, a temp file and a rename, has landed).
    await waitFor(async () => (await readdir(dirname(path))).every((name) => name === 'server.json' || name === 'board.json'), {
      what: 'nothing but server.json and board.json in the lease directory',
      timeoutMs: 20_000,
    });
  });

  it('waits for a young URL-less lease, then takes it over as abandoned within the election bound', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const path = leasePath(repo.root);
    await mkdir(dirname(path), { recursive: true });
    // A live process (this test runner) took the lease just now and never binds.
    await writeFile(path, v1(repo.root, { pid: process.pid }));

    const started = Date.now();
    const client = await scene.client(repo.root, { name: 'patient' });
    // A lower bound only: the client cannot have answered before the grace was out. The spawn
    // is in it too, so no upper bound here: the election's own deadline is checked below.
    expect(Date.now() - started, 'it waits the bind grace out first').toBeGreaterThanOrEqual((BIND_GRACE_S - 1) * 1000);
    const found = await waitForLog(
      client.stderr,
      new RegExp(`found a abandoned lease at ${literally(path).source} \\(no URL (\\d+) s after it was taken by process ${process.pid}\\); taking it over`),
    );
    expect(Number(found[1]), 'the lease was judged abandoned once the grace was out').toBeGreaterThanOrEqual(BIND_GRACE_S);
    // Within the election's bound: past its deadline it would serve alone, not as the shared server.
    await expectServes(repo.root, client);
  }, 60_000);
});
