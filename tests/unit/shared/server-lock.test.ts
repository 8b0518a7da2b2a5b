/**
 * The server lock (src/shared/server-lock.ts), each flavour this machine can hold. Covers:
 * - one holder at a time: a second attempt finds it held; released, it can be taken again;
 *   releasing twice is harmless;
 * - the kernel lets go of it when its holder dies of SIGKILL, even while a process the holder
 *   spawned lives on (it did not inherit the lock);
 * - a connection to it gets nothing and is closed;
 * - its address is bounded whatever the checkout's path, and names nothing of it;
 * - the file flavour (platforms without abstract sockets): the socket file is the lock; a file
 *   left by a killed holder is replaced; a failed attempt leaves the holder's file alone; release
 *   removes it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultFlavour, lockAddress, takeServerLock, type LockAttempt, type LockFlavour, type ServerLock } from '../../../src/shared/server-lock.js';

let dir: string;
let leasePath: string;
const held: ServerLock[] = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'majordomus-lock-'));
  leasePath = join(dir, 'local', 'state', 'mcp', 'server.json');
});

afterEach(async () => {
  for (const lock of held.splice(0)) lock.release();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function kept(attempt: LockAttempt): ServerLock {
  if (attempt.kind !== 'taken') throw new Error(`expected the lock to be taken, got ${JSON.stringify(attempt)}`);
  held.push(attempt.lock);
  return attempt.lock;
}

/**
 * A process holding `address` the way the lock does (a bare listen); with `grandchild`, it first
 * spawns a detached `sleep` that outlives it. Resolves once it listens, with the grandchild's pid.
 */
async function holder(address: string, grandchild = false): Promise<{ child: ChildProcess; grandchild: number | null }> {
  const script = `
    const { createServer } = require('node:net');
    const { spawn } = require('node:child_process');
    const server = createServer((socket) => socket.destroy());
    server.listen(JSON.parse(process.argv[1]), () => {
      const sleeper = ${grandchild} ? spawn('sleep', ['30'], { detached: true, stdio: 'ignore' }) : null;
      process.stdout.write(String(sleeper ? sleeper.pid : 0) + '\\n');
    });`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify(address)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
  });
  return { child, grandchild: Number(line) || null };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Answers whether a connection opened and then ended without a byte. */
function connectionSaysNothing(address: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(address);
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
    socket.once('error', reject);
    socket.once('close', () => resolve(bytes === 0));
  });
}

const flavours: LockFlavour[] = defaultFlavour() === 'abstract' ? ['abstract', 'file'] : [defaultFlavour()];

describe.each(flavours)('the server lock (%s)', (flavour) => {
  const take = (): Promise<LockAttempt> => takeServerLock(leasePath, flavour, dir);

  it('has one holder at a time, and can be taken again once released (twice is harmless)', async () => {
    const lock = kept(await take());
    expect(await take()).toEqual({ kind: 'held', address: lock.address });
    lock.release();
    lock.release();
    kept(await take());
  });

  it('is let go by the kernel when its holder dies of SIGKILL, even while a process it spawned lives on', async () => {
    const address = lockAddress(leasePath, flavour, dir);
    const { child, grandchild } = await holder(address, true);
    expect((await take()).kind).toBe('held');
    await killed(child);
    try {
      kept(await take());
    } finally {
      if (grandchild !== null) process.kill(grandchild, 'SIGKILL');
    }
  });

  it('answers a connection with nothing and closes it', async () => {
    const lock = kept(await take());
    const address = lockAddress(leasePath, flavour, dir);
    expect(lock.address).toBe(address.replace(/^\0/, '@'));
    expect(await connectionSaysNothing(address)).toBe(true);
  });
});

describe('the server lock address', () => {
  it('is bounded whatever the checkout path, and does not name it', () => {
    const deep = join('/home', 'x'.repeat(400), 'checkout', '.ai/local/state/mcp/server.json');
    for (const flavour of ['abstract', 'pipe'] as const) {
      const address = lockAddress(deep, flavour);
      expect(Buffer.byteLength(address)).toBeLessThan(108);
      expect(address).not.toContain('checkout');
    }
    expect(lockAddress(deep, 'abstract')).toMatch(/^\0majordomus-server-[0-9a-f]{24}$/);
    expect(lockAddress(deep, 'abstract')).not.toBe(lockAddress(deep.replace('checkout', 'other'), 'abstract'));
  });
});

describe.runIf(defaultFlavour() === 'abstract')('the server lock as a socket file', () => {
  it('is the socket file, left alone by a failed attempt and removed on release', async () => {
    const address = lockAddress(leasePath, 'file', dir);
    const lock = kept(await takeServerLock(leasePath, 'file', dir));
    expect(existsSync(address)).toBe(true);
    expect((await takeServerLock(leasePath, 'file', dir)).kind).toBe('held');
    expect(existsSync(address)).toBe(true);
    expect(await connectionSaysNothing(address)).toBe(true);
    lock.release();
    expect(existsSync(address)).toBe(false);
  });

  it('replaces the file a killed holder left', async () => {
    const address = lockAddress(leasePath, 'file', dir);
    const { child } = await holder(address);
    await killed(child);
    expect(existsSync(address)).toBe(true);
    kept(await takeServerLock(leasePath, 'file', dir));
    expect((await takeServerLock(leasePath, 'file', dir)).kind).toBe('held');
  });
});
