/**
 * The peer board (SPEC §6 "Peers"). Covers:
 * - peers are named p1, p2, … in join order and an id is never reused after a leave;
 * - a peer that leaves is gone from the list;
 * - an announcement is kept (trimmed intent, normalised sorted paths) and shown in the list;
 * - overlaps: equal paths, one containing the other on a `/` boundary (`src` and `src/a`), never
 *   a mere prefix (`src` and `srcx`), and never with oneself;
 * - last_seen_seconds_ago follows the clock;
 * - numbering continues after `issuedBefore` (the peers of a server taken over) and past ids
 *   reserved later (the journals' peers), never moving back; `issued` reports the highest
 *   number given out;
 * - a preferred id that is well-formed and free is granted and later fresh ids skip past it; a
 *   taken or malformed one gets a fresh id.
 */
import { describe, expect, it } from 'vitest';
import { PeerBoard, pathsOverlap } from '../../../src/peers/board.js';

const client = (name: string) => ({ name, version: '1.0.0' });

describe('PeerBoard', () => {
  it('names peers p1, p2, p3 in join order', () => {
    const board = new PeerBoard();
    expect([board.join(client('a'), 'stdio'), board.join(client('b'), 'http'), board.join(client('c'), 'http')]).toEqual(['p1', 'p2', 'p3']);
    expect(board.list().map((p) => [p.id, p.client.name, p.transport])).toEqual([
      ['p1', 'a', 'stdio'],
      ['p2', 'b', 'http'],
      ['p3', 'c', 'http'],
    ]);
  });

  it('forgets a peer that leaves and never reuses its id', () => {
    const board = new PeerBoard();
    const first = board.join(client('a'), 'stdio');
    board.join(client('b'), 'http');
    expect(board.leave(first)).toBe(true);
    expect(board.leave(first)).toBe(false);
    expect(board.has(first)).toBe(false);
    expect(board.list().map((p) => p.id)).toEqual(['p2']);
    expect(board.join(client('c'), 'http')).toBe('p3');
    expect(board.size).toBe(2);
  });

  it('keeps an announcement with a trimmed intent and sorted, normalised, distinct paths', () => {
    let now = Date.parse('2025-01-01T00:00:00Z');
    const board = new PeerBoard({ now: () => now });
    const id = board.join(client('a'), 'stdio');
    now += 5_000;
    const { peer, overlaps } = board.announce(id, '  refactor the parser ', ['./src/b/', 'src/a', 'src//a']);
    expect(overlaps).toEqual([]);
    expect(peer.announcement).toEqual({ intent: 'refactor the parser', paths: ['src/a', 'src/b'], at: '2025-01-01T00:00:05.000Z' });
    expect(board.list()[0]?.announcement?.paths).toEqual(['src/a', 'src/b']);
  });

  it('reports how long ago a peer was last seen from the clock', () => {
    let now = 1_000_000;
    const board = new PeerBoard({ now: () => now });
    const id = board.join(client('a'), 'stdio');
    now += 61_500;
    expect(board.list()[0]?.last_seen_seconds_ago).toBe(61);
    board.touch(id);
    expect(board.list()[0]?.last_seen_seconds_ago).toBe(0);
  });

  it('answers an announcement with the other peers whose paths overlap, never with itself', () => {
    const board = new PeerBoard();
    const p1 = board.join(client('a'), 'stdio');
    const p2 = board.join(client('b'), 'http');
    const p3 = board.join(client('c'), 'http');
    board.announce(p1, 'edit sources', ['src']);
    board.announce(p2, 'edit docs', ['docs', 'srcx']);
    const { overlaps } = board.announce(p3, 'edit one file', ['src/a/file.ts', 'docs']);
    expect(overlaps).toEqual([
      { peer: 'p1', path: 'src/a/file.ts', their_path: 'src' },
      { peer: 'p2', path: 'docs', their_path: 'docs' },
    ]);
    expect(board.announce(p1, 'again', ['src']).overlaps).toEqual([{ peer: 'p3', path: 'src', their_path: 'src/a/file.ts' }]);
  });

  it('continues numbering after issuedBefore', () => {
    const board = new PeerBoard({ issuedBefore: 4 });
    expect(board.issued).toBe(4);
    expect([board.join(client('a'), 'stdio'), board.join(client('b'), 'http')]).toEqual(['p5', 'p6']);
  });

  it('issues fresh ids past reserved ones, never moving the numbering back', () => {
    const board = new PeerBoard({ issuedBefore: 2 });
    board.reserveIds(7);
    expect(board.join(client('a'), 'stdio')).toBe('p8');
    board.reserveIds(3);
    expect(board.join(client('b'), 'http')).toBe('p9');
    expect(board.issued).toBe(9);
  });

  it('reports the highest peer number issued, also after peers leave', () => {
    const board = new PeerBoard();
    expect(board.issued).toBe(0);
    const first = board.join(client('a'), 'stdio');
    board.join(client('b'), 'http');
    board.join(client('c'), 'http');
    board.leave(first);
    expect(board.issued).toBe(3);
  });

  it('grants a free preferred id and issues later fresh ids past it', () => {
    const board = new PeerBoard();
    expect(board.join(client('a'), 'stdio')).toBe('p1');
    expect(board.join(client('bridge'), 'http', 'p9')).toBe('p9');
    expect(board.issued).toBe(9);
    expect(board.join(client('c'), 'http')).toBe('p10');
  });

  it('grants again an id this board issued and its peer left (a session that expired re-attaches)', () => {
    const board = new PeerBoard();
    const first = board.join(client('a'), 'http');
    board.leave(first);
    expect(board.join(client('a'), 'http', first)).toBe(first);
    expect(board.join(client('b'), 'http')).toBe('p2');
  });

  it('gives a reclaimed id back the announcement its peer made on the previous server, once', () => {
    const announcement = { intent: 'refactor the parser', paths: ['src/parser'], at: '2025-01-01T00:00:00.000Z' };
    const board = new PeerBoard({ issuedBefore: 3, restorable: new Map([['p2', announcement]]) });
    expect(board.join(client('bridge'), 'http', 'p2')).toBe('p2');
    expect(board.list()[0]?.announcement).toEqual(announcement);
    const other = board.join(client('c'), 'http', 'p3');
    expect(board.list().find((p) => p.id === other)?.announcement).toBeUndefined();
    board.leave('p2');
    expect(board.join(client('bridge'), 'http', 'p2')).toBe('p2');
    expect(board.list().find((p) => p.id === 'p2')?.announcement).toBeUndefined();
  });

  it('tells its listener of every join, leave and announcement', () => {
    const changes: string[] = [];
    const board = new PeerBoard({ onChange: (change) => changes.push(change) });
    const id = board.join(client('a'), 'stdio');
    board.announce(id, 'work', []);
    board.leave(id);
    board.leave(id);
    expect(changes).toEqual(['join', 'announce', 'leave']);
  });

  it('grants a free preferred id below the next fresh number without moving the numbering back', () => {
    const board = new PeerBoard({ issuedBefore: 7 });
    expect(board.join(client('bridge'), 'http', 'p3')).toBe('p3');
    expect(board.join(client('c'), 'http')).toBe('p8');
  });

  it('issues a fresh id when the preferred one is taken', () => {
    const board = new PeerBoard();
    board.join(client('a'), 'stdio');
    expect(board.join(client('b'), 'http', 'p1')).toBe('p2');
    expect(board.list().map((p) => p.client.name)).toEqual(['a', 'b']);
  });

  it.each(['', 'x1', 'p0', 'p01', 'P5', 'p-1', 'p1.5', 'p 2', 'p1234567890'])('issues a fresh id for the malformed preferred id %j', (preferred) => {
    const board = new PeerBoard({ issuedBefore: 2 });
    expect(board.join(client('a'), 'http', preferred)).toBe('p3');
    expect(board.issued).toBe(3);
  });

  it('refuses an announcement from a peer that is not on the board', () => {
    expect(() => new PeerBoard().announce('p9', 'x', [])).toThrow(/p9/);
  });
});

describe('pathsOverlap', () => {
  it('overlaps a directory and a path below it, in either order', () => {
    expect(pathsOverlap('src', 'src/a')).toBe(true);
    expect(pathsOverlap('src/a', 'src')).toBe(true);
    expect(pathsOverlap('src/', 'src/a/b.ts')).toBe(true);
  });

  it('does not overlap paths that only share a prefix', () => {
    expect(pathsOverlap('src', 'srcx')).toBe(false);
    expect(pathsOverlap('srcx', 'src')).toBe(false);
    expect(pathsOverlap('src/a', 'src/ab')).toBe(false);
  });

  it('overlaps equal paths, also when spelled with ./ or a trailing slash', () => {
    expect(pathsOverlap('src', 'src')).toBe(true);
    expect(pathsOverlap('./src/', 'src')).toBe(true);
  });

  it('does not overlap siblings', () => {
    expect(pathsOverlap('src/a', 'src/b')).toBe(false);
  });

  it('treats the checkout root (".", "./" or "/") as overlapping every path', () => {
    expect(pathsOverlap('./', 'src')).toBe(true);
    expect(pathsOverlap('/', 'src/a')).toBe(true);
    // Bug: "." is not normalised to the root, so it overlaps nothing but "." itself.
    expect(pathsOverlap('.', 'src')).toBe(true);
  });
});
