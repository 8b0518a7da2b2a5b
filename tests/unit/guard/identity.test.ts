/**
 * Who is committing (src/guard/identity.ts; `MAJORDOMUS_PEER` is read in src/platform/settings.ts:
 * tests/unit/platform/settings.test.ts). Covers:
 * - the ancestry read from `/proc/<pid>/stat` (a fake tree, then the real one): nearest first,
 *   stopping before pid 1, at 64 pids, at a loop, or where the chain cannot be read; a process
 *   name holding spaces and parentheses; empty on a system without `/proc`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANCESTRY, ancestry, parentOf } from '../../../src/guard/identity.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

describe('ancestry', () => {
  let proc: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ path: proc, cleanup } = await makeTempDir('majordomus-proc-'));
  });

  afterEach(async () => {
    await cleanup();
  });

  /** A fake `/proc/<pid>/stat` whose parent is `parent`. */
  async function processEntry(pid: number, parent: number, name = 'sh'): Promise<void> {
    await mkdir(join(proc, String(pid)), { recursive: true });
    await writeFile(join(proc, String(pid), 'stat'), `${pid} (${name}) S ${parent} ${pid} ${pid} 0 -1 4194560 100 0 0 0\n`);
  }

  it('reads the parent after the process name, even one with spaces and parentheses', async () => {
    await processEntry(42, 7, 'my (odd) name) x');
    expect(parentOf(42, proc)).toBe(7);
    expect(parentOf(43, proc)).toBeNull();
  });

  it('walks up nearest first and stops before pid 1', async () => {
    await processEntry(500, 400);
    await processEntry(400, 300, 'git');
    await processEntry(300, 1, 'claude');
    await processEntry(1, 0, 'init');
    expect(ancestry(500, proc)).toEqual([500, 400, 300]);
  });

  it('ends the chain where a parent cannot be read', async () => {
    await processEntry(500, 400);
    expect(ancestry(500, proc)).toEqual([500, 400]);
  });

  it('stops at a loop and at the most the server accepts', async () => {
    await processEntry(10, 11);
    await processEntry(11, 10);
    expect(ancestry(10, proc)).toEqual([10, 11]);
    for (let pid = 1000; pid < 1100; pid += 1) await processEntry(pid, pid + 1);
    const chain = ancestry(1000, proc);
    expect(chain).toHaveLength(MAX_ANCESTRY);
    expect(chain[0]).toBe(1000);
    expect(chain.at(-1)).toBe(1000 + MAX_ANCESTRY - 1);
  });

  it('is empty without /proc', () => {
    expect(ancestry(500, join(proc, 'missing'))).toEqual([]);
  });

  it('reads this very process chain from the real /proc, our parent first', () => {
    const chain = ancestry(process.pid);
    expect(chain[0]).toBe(process.pid);
    expect(chain[1]).toBe(process.ppid);
    expect(chain).not.toContain(1);
    expect(ancestry()[0]).toBe(process.ppid);
  });
});
