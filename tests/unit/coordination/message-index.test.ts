/**
 * The message index and the texts held in memory. Covers:
 * - the index files messages in id order, finds a slot by id, answers each message's journal
 *   line, and refuses an id out of order or not of this server's making;
 * - a thread is its first message and every message naming it, oldest first, wherever the first
 *   falls; an unknown thread has no slots;
 * - the texts held stay within their budget, oldest out first, counting a message's text twice
 *   and a fixed share besides, and fold a held text for search once.
 */
import { describe, expect, it } from 'vitest';
import { MessageIndex, messageNumber } from '../../../src/coordination/message-index.js';
import { RESIDENT_OVERHEAD_BYTES, ResidentTexts, residentCost } from '../../../src/coordination/resident-texts.js';
import type { StoredMessage } from '../../../src/coordination/messages.js';

const line = (offset: number) => ({ offset, length: 10 });

function message(id: string, body: string, subject?: string): StoredMessage {
  return { id, thread: id, from: 'p1', to: ['p2'], recipients: ['p2'], body, at: '2026-11-30T12:00:00.000Z', epoch: 'e1', ...(subject ? { subject } : {}) };
}

describe('MessageIndex', () => {
  it('files messages in id order, finds them by id and answers their journal lines', () => {
    const index = new MessageIndex();
    expect(index.add('m3', 'm3', line(0))).toBe(0);
    expect(index.add('m7', 'm7', null)).toBe(1);
    expect(index.add('m5', 'm5', line(20))).toBeNull();
    expect(index.add('m7', 'm7', line(20))).toBeNull();
    expect(index.add('x1', 'x1', line(20))).toBeNull();
    expect(index.nextNumber).toBe(8);
    expect([index.slotOf('m3'), index.slotOf('m7'), index.slotOf('m4'), index.slotOf('nope')]).toEqual([0, 1, null, null]);
    expect(index.idAt(1)).toBe('m7');
    expect([index.lineAt(0), index.lineAt(1)]).toEqual([line(0), null]);
    expect([messageNumber('m12'), messageNumber('m0'), messageNumber('m01'), messageNumber('12')]).toEqual([12, null, null, null]);
  });

  it('reads a thread as its first message and every message naming it, oldest first', () => {
    const index = new MessageIndex();
    index.add('m1', 'plan', null); // a named thread
    index.add('m2', 'm2', null); // starts its own
    index.add('m3', 'm2', null);
    index.add('m4', 'plan', null);
    index.add('m5', 'm6', null); // names a thread before its first message exists
    index.add('m6', 'm6', null);
    index.add('m7', 'm6', null);
    expect(index.thread('plan')).toEqual([0, 3]);
    expect(index.thread('m2')).toEqual([1, 2]);
    expect(index.thread('m6')).toEqual([4, 5, 6]);
    expect(index.thread('m1')).toEqual([]); // m1 started no thread of its own
    expect(index.thread('none')).toEqual([]);
  });
});

describe('ResidentTexts', () => {
  it('holds the newest within its budget, oldest out first, counting text twice and a share besides', () => {
    const cost = residentCost(message('m1', 'ж'.repeat(100), 'hi'));
    expect(cost).toBe(2 * (200 + 2) + RESIDENT_OVERHEAD_BYTES);
    const held = new ResidentTexts(3 * cost);
    expect([0, 1, 2].map((slot) => held.hold(slot, message(`m${slot + 1}`, 'ж'.repeat(100), 'hi')))).toEqual([[], [], []]);
    expect(held.hold(3, message('m4', 'ж'.repeat(200), 'hi'))).toEqual([0, 1]);
    expect([held.oldest, held.count, held.bytes <= 3 * cost]).toEqual([2, 2, true]);
    expect(held.get(2)?.id).toBe('m3');
    expect(held.has(0)).toBe(false);
    expect(held.hold(4, message('m5', 'x'.repeat(10 * cost)))).toEqual([2, 3, 4]); // larger than the budget: not held at all
    expect([held.oldest, held.count, held.bytes]).toEqual([null, 0, 0]);
  });

  it('folds a held message for search once', () => {
    const held = new ResidentTexts(1_000_000);
    held.hold(0, message('m1', 'Kůň', 'Žluťoučký'));
    expect(held.searchText(0)).toBe('zlutoucky\nkun');
    expect(held.searchText(0)).toBe(held.searchText(0));
    expect(held.searchText(1)).toBeUndefined();
  });
});
