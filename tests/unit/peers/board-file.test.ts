/**
 * The board saved beside the lease. Covers:
 * - a successor that took over the lease carries on its numbering, announcements and lineage;
 * - a board of another lease gives nothing of its lineage (announcements, epoch), unless it was
 *   handed off by a server that stopped with peers attached, and only within the hand-off window;
 *   its numbering stands whoever reads it (no peer id is issued twice);
 * - a handed-off board stays when the stopping server removes its files; a clean end removes it.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BoardFile, HANDOFF_WINDOW_MS, loadSavedBoard } from '../../../src/peers/board-file.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function boardPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'majordomus-board-'));
  dirs.push(dir);
  return join(dir, 'board.json');
}

const state = { issued: 3, announcements: [{ id: 'p2', announcement: { intent: 'docs', paths: ['docs'], at: '2026-11-30T12:00:00.000Z' } }] };

describe('the saved board', () => {
  it('is carried on by the server that took over its lease, with its lineage', async () => {
    const path = await boardPath();
    const file = new BoardFile(path, 'token-1', 'abc123');
    file.save(() => state);
    await expect.poll(async () => (await loadSavedBoard(path, 'token-1')).issued, { timeout: 10_000 }).toBe(3);
    const saved = await loadSavedBoard(path, 'token-1');
    expect(saved.epoch).toBe('abc123');
    expect(saved.announcements.get('p2')?.intent).toBe('docs');
    expect(await loadSavedBoard(path, 'token-2')).toEqual({ issued: 3, announcements: new Map(), epoch: null });
    expect(await loadSavedBoard(path, null)).toEqual({ issued: 3, announcements: new Map(), epoch: null });
    await file.remove();
    await expect(stat(path)).rejects.toThrow();
  });

  it('is handed off to whoever serves next within the window, and survives the stopping server\'s cleanup', async () => {
    const path = await boardPath();
    const file = new BoardFile(path, 'token-1', 'abc123');
    await file.handOff(state);
    await file.remove();
    const written = JSON.parse(await readFile(path, 'utf8')) as { handed_off_at: string };
    const at = Date.parse(written.handed_off_at);
    expect((await loadSavedBoard(path, null, at + 1_000)).epoch).toBe('abc123');
    expect((await loadSavedBoard(path, 'another-lease', at + HANDOFF_WINDOW_MS)).issued).toBe(3);
    expect(await loadSavedBoard(path, null, at + HANDOFF_WINDOW_MS + 1)).toEqual({ issued: 3, announcements: new Map(), epoch: null });
  });
});
