/**
 * The checkout's confinement (src/platform/confine.ts), on a real tree:
 * - inside lexically: '' for the root, `..foo` is a name, `..` and `../x` and other roots leave;
 * - resolveInside refuses an absolute path unless allowed, and a path that climbs out;
 * - realInside follows links (and, for a new file, its nearest existing parent) and refuses one
 *   that leads out, or a dangling link;
 * - readRegular opens regular files only: a FIFO, a socket and a directory are refused at once
 *   (the FIFO never blocks), a link is refused, and the bound holds;
 * - assertWritableInside refuses a target below a linked directory or a linked file.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertWritableInside, insidePath, readRegular, readRegularSync, realInside, resolveInside } from '../../../src/platform/confine.js';

let root: string;
let outside: string;
let socketServer: Server;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-confine-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'majordomus-confine-out-')));
  await mkdir(join(root, 'src'));
  await writeFile(join(root, 'src/a.ts'), 'export {};\n');
  await writeFile(join(root, '..foo'), 'a name');
  await writeFile(join(outside, 'secret'), 'secret');
  await symlink(outside, join(root, 'out'));
  await symlink('src/a.ts', join(root, 'link.ts'));
  await symlink('missing-target', join(root, 'dangling'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(join(root, 'sock'), resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => socketServer.close(() => resolve()));
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('insidePath', () => {
  it('answers the relative path of what is beneath the root, and undefined for what is not', () => {
    expect(insidePath('/r', '/r')).toBe('');
    expect(insidePath('/r', '/r/a/b')).toBe('a/b');
    expect(insidePath('/r', '/r/..foo')).toBe('..foo');
    expect(insidePath('/r', '/')).toBeUndefined();
    expect(insidePath('/r', '/rx')).toBeUndefined();
    expect(insidePath('/r', '/other/r')).toBeUndefined();
  });
});

describe('resolveInside', () => {
  it('resolves against a base inside the root and refuses what climbs out or is absolute', () => {
    expect(resolveInside(root, 'b', { base: join(root, 'src') })).toEqual({ absolute: join(root, 'src/b'), relative: 'src/b' });
    expect(resolveInside(root, '..foo').relative).toBe('..foo');
    expect(() => resolveInside(root, '../x')).toThrow(expect.objectContaining({ reason: 'outside' }));
    expect(() => resolveInside(root, '/etc/passwd')).toThrow(expect.objectContaining({ reason: 'absolute' }));
    expect(resolveInside(root, join(root, 'src'), { allowAbsolute: true }).relative).toBe('src');
    expect(() => resolveInside(root, '/etc', { allowAbsolute: true })).toThrow(expect.objectContaining({ reason: 'outside' }));
  });
});

describe('realInside', () => {
  it('follows links inside the root, and for a new file its nearest existing parent', async () => {
    expect(await realInside(root, join(root, 'link.ts'))).toEqual({ absolute: join(root, 'src/a.ts'), relative: 'src/a.ts' });
    expect(await realInside(root, join(root, 'src/new/deeper.ts'))).toMatchObject({ relative: 'src/new/deeper.ts' });
  });

  it('refuses a path that leads out through a link, and a dangling link', async () => {
    await expect(realInside(root, join(root, 'out/secret'))).rejects.toMatchObject({ reason: 'through_link' });
    await expect(realInside(root, join(root, 'out/new-file'))).rejects.toMatchObject({ reason: 'through_link' });
    await expect(realInside(root, join(root, 'dangling'))).rejects.toMatchObject({ reason: 'symlink' });
  });
});

describe('readRegular', () => {
  it('reads a regular file within its bound', async () => {
    const read = await readRegular(join(root, 'src/a.ts'), 100);
    expect(read.ok && read.bytes.toString()).toBe('export {};\n');
    expect(readRegularSync(join(root, 'src/a.ts'), 100)).toMatchObject({ ok: true });
  });

  it('refuses a FIFO, a socket and a directory at once, without opening them', async () => {
    const started = Date.now();
    expect(await readRegular(join(root, 'fifo'), 100)).toMatchObject({ ok: false, reason: 'not_regular', detail: expect.stringContaining('a FIFO') });
    expect(await readRegular(join(root, 'sock'), 100)).toMatchObject({ ok: false, reason: 'not_regular', detail: expect.stringContaining('a socket') });
    expect(await readRegular(join(root, 'src'), 100)).toMatchObject({ ok: false, reason: 'not_regular', detail: expect.stringContaining('a directory') });
    expect(readRegularSync(join(root, 'fifo'), 100)).toMatchObject({ ok: false, reason: 'not_regular' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses a link, a missing file and a file over its bound', async () => {
    expect(await readRegular(join(root, 'link.ts'), 100)).toMatchObject({ ok: false, reason: 'symlink' });
    expect(await readRegular(join(root, 'nothing'), 100)).toMatchObject({ ok: false, reason: 'missing' });
    expect(await readRegular(join(root, 'src/a.ts'), 4)).toMatchObject({ ok: false, reason: 'too_large' });
  });
});

describe('assertWritableInside', () => {
  it('accepts a new or regular file below real directories', async () => {
    await expect(assertWritableInside(root, 'src/a.ts')).resolves.toMatchObject({ relative: 'src/a.ts' });
    await expect(assertWritableInside(root, 'new/dir/file.json')).resolves.toMatchObject({ relative: 'new/dir/file.json' });
  });

  it('refuses a target below a linked directory, a linked file, a FIFO, and one that climbs out', async () => {
    await expect(assertWritableInside(root, 'out/settings.json')).rejects.toMatchObject({ reason: 'symlink', detail: expect.stringContaining('out is a symbolic link') });
    await expect(assertWritableInside(root, 'link.ts')).rejects.toMatchObject({ reason: 'symlink' });
    await expect(assertWritableInside(root, 'fifo')).rejects.toMatchObject({ reason: 'not_regular' });
    await expect(assertWritableInside(root, '../x')).rejects.toMatchObject({ reason: 'outside' });
  });
});
