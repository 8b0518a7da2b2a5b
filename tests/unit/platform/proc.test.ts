/**
 * The /proc readers (src/platform/proc.ts), on a fake /proc and on the real one. Covers:
 * - one parser of `/proc/PID/stat`: parent, process group, session and start time, read after
 *   the last ')' of a command name that holds spaces and parentheses;
 * - every reader answers null for a process that is not there, or a stat it cannot parse, and
 *   without /proc at all;
 * - on the real /proc: this process's group and session agree with `ps`, its start time stays
 *   the same between reads, and a process that has ended is gone;
 * - a header of pids is bounded, and anything malformed yields none.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestry, parentOf, parsePids, processGroupOf, sessionOf, startTicksOf } from '../../../src/platform/proc.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

describe('a fake /proc', () => {
  let proc: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ path: proc, cleanup } = await makeTempDir('majordomus-proc-'));
  });

  afterEach(async () => {
    await cleanup();
  });

  /** `/proc/<pid>/stat` with fields 1–22 as proc(5) numbers them. */
  async function processEntry(pid: number, fields: { name?: string; ppid: number; pgid: number; session: number; start: string }): Promise<void> {
    await mkdir(join(proc, String(pid)), { recursive: true });
    const between = Array.from({ length: 15 }, () => '0').join(' '); // fields 7–21
    await writeFile(join(proc, String(pid), 'stat'), `${pid} (${fields.name ?? 'sh'}) S ${fields.ppid} ${fields.pgid} ${fields.session} ${between} ${fields.start} 0 0\n`);
  }

  it('reads parent, group, session and start time after a name with spaces and parentheses', async () => {
    await processEntry(42, { name: 'my (odd) name) x', ppid: 7, pgid: 40, session: 30, start: '123456789012345678' });
    expect(parentOf(42, proc)).toBe(7);
    expect(processGroupOf(42, proc)).toBe(40);
    expect(sessionOf(42, proc)).toBe(30);
    expect(startTicksOf(42, proc)).toBe('123456789012345678');
  });

  it('answers null for a process that is not there, a stat it cannot parse, or no /proc', async () => {
    await mkdir(join(proc, '9'));
    await writeFile(join(proc, '9', 'stat'), '9 (broken');
    for (const [pid, root] of [
      [43, proc],
      [9, proc],
      [42, join(proc, 'missing')],
    ] as const) {
      expect(parentOf(pid, root)).toBeNull();
      expect(processGroupOf(pid, root)).toBeNull();
      expect(sessionOf(pid, root)).toBeNull();
      expect(startTicksOf(pid, root)).toBeNull();
    }
    expect(ancestry(42, { procRoot: join(proc, 'missing') })).toEqual([]);
  });
});

describe('the real /proc', () => {
  it('agrees with ps about this process\'s group and session, and its start time holds', async () => {
    const { stdout } = await promisify(execFile)('ps', ['-o', 'pgid=,sid=', '-p', String(process.pid)]);
    const [pgid, sid] = stdout.trim().split(/\s+/).map(Number);
    expect(processGroupOf(process.pid)).toBe(pgid);
    expect(sessionOf(process.pid)).toBe(sid);
    expect(startTicksOf(process.pid)).toMatch(/^\d+$/);
    expect(startTicksOf(process.pid)).toBe(startTicksOf(process.pid));
    expect(parentOf(process.pid)).toBe(process.ppid);
  });

  it('knows nothing of a process that has ended', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const pid = child.pid as number;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(startTicksOf(pid)).toBeNull();
    expect(processGroupOf(pid)).toBeNull();
  });
});

describe('parsePids', () => {
  it('reads a bounded list and refuses anything malformed', () => {
    expect(parsePids('')).toEqual([]);
    expect(parsePids('123, 456')).toEqual([123, 456]);
    expect(parsePids('1,2,3', 2)).toEqual([]);
    expect(parsePids('12,34,56', 2)).toEqual([12, 34]);
    expect(parsePids('12,x')).toEqual([]);
  });
});
