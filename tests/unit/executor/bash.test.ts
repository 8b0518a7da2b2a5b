/**
 * bash as a tool: runs in the working directory with stdout and stderr merged and the exit code
 * said; a timeout or a cancelled turn kills the whole process group and the PID namespace (a
 * daemon that called setsid included); long output keeps its head and tail; the executor's own
 * secrets are not in the command's environment.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait.js';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

let box: Toolbox;

beforeEach(async () => {
  box = await createToolbox({ files: { 'src/a.txt': 'a\n' } });
});

afterEach(async () => {
  await box.cleanup();
});

/** Host processes whose command line holds `tag` (read from /proc, outside any namespace of ours). */
async function processesWith(tag: string): Promise<number> {
  let count = 0;
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(tag)) count++;
  }
  return count;
}

/** A sleep duration no other process on the machine uses, to find ours by. */
function uniqueSleep(): string {
  return `${1000 + Math.floor(Math.random() * 8000)}.${process.pid}${Math.floor(Math.random() * 1000)}`;
}

describe('bash', () => {
  it('runs in the working directory, merges stderr into the output and says the exit code', async () => {
    const outcome = await box.run('bash', { command: 'pwd; echo out; echo err >&2; exit 3' }, { cwd: join(box.root, 'src') });
    expect(outcome).toEqual({ ok: false, output: `${box.root}/src\nout\nerr\n[exit code 3]` });
    expect(await box.run('bash', { command: 'true' })).toEqual({ ok: true, output: '(no output)\n[exit code 0]' });
  });

  it('kills the whole process group on timeout, a daemon that left it with setsid included', async () => {
    const daemon = uniqueSleep();
    const child = uniqueSleep();
    const started = Date.now();
    const outcome = await box.run('bash', { command: `setsid sleep ${daemon} & sleep ${child} & echo started; wait`, timeout: 1 });
    expect(outcome).toEqual({ ok: false, output: 'started\n[killed: timed out after 1 s]' });
    expect(Date.now() - started).toBeLessThan(30_000);
    await waitFor(async () => (await processesWith(`sleep ${daemon}`)) + (await processesWith(`sleep ${child}`)) === 0, { what: 'the timed-out processes to be gone' });
  });

  it('kills the command when the turn is cancelled, and runs nothing once it is', async () => {
    const controller = new AbortController();
    const sleep = uniqueSleep();
    const running = box.run('bash', { command: `touch started && sleep ${sleep}` }, { signal: controller.signal });
    await waitFor(() => existsSync(join(box.root, 'started')), { what: 'the command to start' });
    controller.abort();
    expect(await running).toEqual({ ok: false, output: '(no output)\n[killed: the turn was cancelled]' });
    await waitFor(async () => (await processesWith(`sleep ${sleep}`)) === 0, { what: 'the cancelled sleep to be gone' });
    expect(await box.run('bash', { command: 'touch never' }, { signal: controller.signal })).toEqual({ ok: false, output: 'not run: the turn was cancelled' });
    expect(existsSync(join(box.root, 'never'))).toBe(false);
  });

  it('keeps the head and the tail of a long output with a marker of how much was cut', async () => {
    const outcome = await box.run('bash', { command: 'seq 1 100000' });
    expect(outcome.ok).toBe(true);
    expect(outcome.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(outcome.output.endsWith('99999\n100000\n[exit code 0]')).toBe(true);
    expect(outcome.output).toMatch(/\n\[… \d+ bytes cut …\]\n/);
    expect(outcome.output.length).toBeLessThan(31_000);
  });

  it('does not pass the executor\'s keys and tokens to the command', async () => {
    process.env.MAJORDOMUS_TEST_API_KEY = 'key-value-98765';
    process.env.MAJORDOMUS_TEST_TOKEN = 'token-value-98765';
    try {
      const outcome = await box.run('bash', { command: 'env' });
      expect(outcome.output).not.toContain('98765');
      expect(outcome.output).toMatch(/^PATH=/m);
    } finally {
      delete process.env.MAJORDOMUS_TEST_API_KEY;
      delete process.env.MAJORDOMUS_TEST_TOKEN;
    }
  });

  it('answers a bad input with what is wrong', async () => {
    expect((await box.run('bash', { command: '  ' })).output).toMatch(/^invalid input for bash: command: Too small/);
    expect((await box.run('bash', { command: 'true', timeout: 0 })).output).toMatch(/^invalid input for bash: timeout: Too small/);
    expect((await box.run('bash', { command: 'true', timeout: 601 })).output).toMatch(/^invalid input for bash: timeout: Too big/);
  });
});
