/**
 * The lease file (src/shared/lease.ts). Covers:
 * - createLease is exclusive: the first create wins, a second answers false and leaves the first;
 *   the file is mode 0600 and holds the v1 document as JSON;
 * - createLease where the directory cannot be made (its parent is a regular file) throws
 *   LeaseUnavailable;
 * - readLease tells absent, empty, corrupt (not JSON, not an object, another schema, missing
 *   fields, a directory at the path) and a document apart;
 * - removeLeaseIfUnchanged removes the bytes it judged, puts back a file whose content changed,
 *   removes a directory judged with raw '' and leaves no `*.replaced` entry behind;
 * - publishLease writes the URL only while the token is ours and leaves no temp file; a reader
 *   never sees the lease absent while it is rewritten; every change takes the lease's lock, whose
 *   dead holder is broken and whose live holder is waited for;
 * - releaseLeaseSync removes the file only with our token.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLease,
  LEASE_SCHEMA,
  LeaseUnavailable,
  newLeaseDocument,
  publishLease,
  readLease,
  releaseLeaseSync,
  removeLeaseIfUnchanged,
  type LeaseDocument,
} from '../../../src/shared/lease.js';

let dir: string;
let leasePath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'majordomus-lease-'));
  leasePath = join(dir, 'state', 'mcp', 'server.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A lease document as newLeaseDocument writes one (its token random). */
function doc(overrides: Partial<LeaseDocument> = {}): LeaseDocument {
  return {
    schema: LEASE_SCHEMA,
    pid: process.pid,
    token: Math.random().toString(16).slice(2).padEnd(32, '0'),
    root: dir,
    url: null,
    started_at: new Date().toISOString(),
    version: '0.0.0-test',
    ...overrides,
  };
}

/** Writes `text` at the lease path, making its directory. */
function put(text: string): void {
  mkdirSync(join(dir, 'state', 'mcp'), { recursive: true });
  writeFileSync(leasePath, text);
}

function leaseFolder(): string[] {
  return readdirSync(join(dir, 'state', 'mcp')).sort();
}

describe('createLease', () => {
  it('creates the lease once: a second create answers false and leaves the first document', async () => {
    const first = doc();
    const second = doc();
    expect(await createLease(leasePath, first)).toBe(true);
    expect(await createLease(leasePath, second)).toBe(false);
    expect(JSON.parse(readFileSync(leasePath, 'utf8'))).toEqual(first);
  });

  it('writes a mode 0600 JSON document of the v1 schema, with a random 128-bit token', async () => {
    const lease = await newLeaseDocument(dir, '0.0.0-test');
    expect(lease.token).toMatch(/^[0-9a-f]{32}$/);
    expect((await newLeaseDocument(dir, '0.0.0-test')).token).not.toBe(lease.token);
    await createLease(leasePath, lease);
    expect(statSync(leasePath).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(leasePath, 'utf8')) as LeaseDocument;
    expect(written).toEqual({
      schema: LEASE_SCHEMA,
      pid: process.pid,
      token: lease.token,
      root: dir,
      url: null,
      started_at: lease.started_at,
      version: '0.0.0-test',
    });
    expect(LEASE_SCHEMA).toBe('majordomus-mcp-lease/v1');
    expect(lease.token).toMatch(/^[0-9a-f]{32}$/);
  });

  it('throws LeaseUnavailable when the lease directory cannot be made', async () => {
    writeFileSync(join(dir, 'state'), 'a regular file where a directory belongs');
    await expect(createLease(leasePath, doc())).rejects.toBeInstanceOf(LeaseUnavailable);
  });
});

describe('readLease', () => {
  it('reads a missing file as absent', async () => {
    expect(await readLease(leasePath)).toEqual({ state: 'absent' });
  });

  it('reads a zero-byte file as empty, with its modification time', async () => {
    put('');
    const reading = await readLease(leasePath);
    expect(reading).toEqual({ state: 'empty', raw: '', modifiedMs: statSync(leasePath).mtimeMs });
  });

  it('reads a lease document with the exact bytes it holds', async () => {
    const lease = doc({ url: 'http://127.0.0.1:1234' });
    const text = `${JSON.stringify(lease)}\n`;
    put(text);
    const reading = await readLease(leasePath);
    expect(reading).toEqual({ state: 'document', doc: lease, raw: text, modifiedMs: statSync(leasePath).mtimeMs });
  });

  it.each([
    ['text that is not JSON', '{"schema": ', 'not JSON'],
    ['a JSON array', '[1, 2]', 'not a JSON object'],
    ['JSON null', 'null', 'not a JSON object'],
    ['a JSON string', '"server"', 'not a JSON object'],
    ['another schema', JSON.stringify({ schema: 'majordomus-mcp-lease/v0', pid: 1, token: 't', url: null }), 'schema "majordomus-mcp-lease/v0"'],
    ['no schema at all', JSON.stringify({ pid: 1, token: 't', url: null }), 'schema null'],
    ['a document without a token', JSON.stringify({ schema: LEASE_SCHEMA, pid: 1, url: null }), 'missing token, pid or url'],
    ['a document without a pid', JSON.stringify({ schema: LEASE_SCHEMA, token: 't', url: null }), 'missing token, pid or url'],
    ['a document with a numeric url', JSON.stringify({ schema: LEASE_SCHEMA, pid: 1, token: 't', url: 80 }), 'missing token, pid or url'],
  ])('reads %s as corrupt and keeps its bytes', async (_what, text, detail) => {
    put(text);
    const reading = await readLease(leasePath);
    expect(reading.state).toBe('corrupt');
    if (reading.state !== 'corrupt') return;
    expect(reading.detail).toContain(detail);
    expect(reading.raw).toBe(text);
  });

  it('reads a directory at the lease path as corrupt, with raw ""', async () => {
    mkdirSync(leasePath, { recursive: true });
    expect(await readLease(leasePath)).toEqual({ state: 'corrupt', detail: 'a directory, not a file', raw: '', modifiedMs: 0 });
  });

  it('throws LeaseUnavailable when the path cannot be read at all', async () => {
    writeFileSync(join(dir, 'state'), 'a regular file where a directory belongs');
    await expect(readLease(leasePath)).rejects.toBeInstanceOf(LeaseUnavailable);
  });
});

describe('removeLeaseIfUnchanged', () => {
  it('removes the file when it still holds the judged bytes', async () => {
    put('not json');
    expect(await removeLeaseIfUnchanged(leasePath, 'not json')).toBe(true);
    expect(leaseFolder()).toEqual([]);
  });

  it('puts back a file whose content changed since it was judged', async () => {
    const fresh = `${JSON.stringify(doc())}\n`;
    put(fresh);
    expect(await removeLeaseIfUnchanged(leasePath, 'the stale bytes we judged')).toBe(false);
    expect(readFileSync(leasePath, 'utf8')).toBe(fresh);
    expect(leaseFolder()).toEqual(['server.json']);
  });

  it('answers false when there is no file any more', async () => {
    mkdirSync(join(dir, 'state', 'mcp'), { recursive: true });
    expect(await removeLeaseIfUnchanged(leasePath, '')).toBe(false);
    expect(leaseFolder()).toEqual([]);
  });

  it('removes a directory judged with raw "" and leaves nothing behind', async () => {
    mkdirSync(join(leasePath, 'inside'), { recursive: true });
    writeFileSync(join(leasePath, 'inside', 'file'), 'x');
    const reading = await readLease(leasePath);
    expect(reading.state).toBe('corrupt');
    if (reading.state !== 'corrupt') return;
    expect(await removeLeaseIfUnchanged(leasePath, reading.raw)).toBe(true);
    expect(leaseFolder()).toEqual([]);
  });
});

describe('publishLease', () => {
  it('writes the bound URL while the lease carries our token, and leaves no temp file', async () => {
    const lease = doc();
    await createLease(leasePath, lease);
    const bound = { ...lease, url: 'http://127.0.0.1:4321' };
    expect(await publishLease(leasePath, bound)).toBe(true);
    expect(JSON.parse(readFileSync(leasePath, 'utf8'))).toEqual(bound);
    expect(statSync(leasePath).mode & 0o777).toBe(0o600);
    expect(leaseFolder()).toEqual(['server.json']);
  });

  it('refuses to publish over a lease that carries another token', async () => {
    const theirs = doc();
    await createLease(leasePath, theirs);
    const before = readFileSync(leasePath, 'utf8');
    expect(await publishLease(leasePath, { ...doc(), url: 'http://127.0.0.1:4321' })).toBe(false);
    expect(readFileSync(leasePath, 'utf8')).toBe(before);
    expect(leaseFolder()).toEqual(['server.json']);
  });

  it('never lets a reader see the lease absent while it is republished, and never overwrites a lease taken meanwhile', async () => {
    const lease = doc();
    await createLease(leasePath, lease);
    let reading = true;
    const seen = new Set<string>();
    const reader = (async () => {
      while (reading) {
        seen.add((await readLease(leasePath)).state);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    for (let i = 0; i < 200; i += 1) expect(await publishLease(leasePath, { ...lease, url: `http://127.0.0.1:${1000 + i}` })).toBe(true);
    reading = false;
    await reader;
    expect([...seen]).toEqual(['document']);
    // A taker's lease between our check and our write would be a change under the same lock: ours waits.
    const theirs = doc();
    const raw = readFileSync(leasePath, 'utf8');
    expect(await removeLeaseIfUnchanged(leasePath, raw)).toBe(true);
    expect(await createLease(leasePath, theirs)).toBe(true);
    expect(await publishLease(leasePath, { ...lease, url: 'http://127.0.0.1:9999' })).toBe(false);
    expect(JSON.parse(readFileSync(leasePath, 'utf8')).token).toBe(theirs.token);
    expect(leaseFolder()).toEqual(['server.json']);
  });

  it('breaks the lock of a process that died holding it, and waits for a live holder to let go', async () => {
    const lease = doc();
    await createLease(leasePath, lease);
    writeFileSync(`${leasePath}.lock`, `${4_194_304 + 11} deadbeef\n`);
    expect(await publishLease(leasePath, { ...lease, url: 'http://127.0.0.1:1' })).toBe(true);
    writeFileSync(`${leasePath}.lock`, `${process.pid} someone-else\n`);
    const publishing = publishLease(leasePath, { ...lease, url: 'http://127.0.0.1:2' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(JSON.parse(readFileSync(leasePath, 'utf8')).url).toBe('http://127.0.0.1:1');
    rmSync(`${leasePath}.lock`);
    expect(await publishing).toBe(true);
    expect(JSON.parse(readFileSync(leasePath, 'utf8')).url).toBe('http://127.0.0.1:2');
    expect(leaseFolder()).toEqual(['server.json']);
  });

  it('refuses to publish when the lease is gone', async () => {
    mkdirSync(join(dir, 'state', 'mcp'), { recursive: true });
    expect(await publishLease(leasePath, { ...doc(), url: 'http://127.0.0.1:4321' })).toBe(false);
    expect(leaseFolder()).toEqual([]);
  });
});

describe('releaseLeaseSync', () => {
  it('removes the lease when it carries our token', async () => {
    const lease = doc();
    await createLease(leasePath, lease);
    expect(releaseLeaseSync(leasePath, lease.token)).toBe(true);
    expect(existsSync(leasePath)).toBe(false);
  });

  it('leaves a lease that carries another token', async () => {
    await createLease(leasePath, doc());
    expect(releaseLeaseSync(leasePath, doc().token)).toBe(false);
    expect(existsSync(leasePath)).toBe(true);
  });

  it('answers false for a missing or unreadable lease', () => {
    expect(releaseLeaseSync(leasePath, 'any')).toBe(false);
    put('not json');
    expect(releaseLeaseSync(leasePath, 'any')).toBe(false);
    expect(existsSync(leasePath)).toBe(true);
  });
});
