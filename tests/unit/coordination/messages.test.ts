/**
 * Messages. Covers:
 * - a message starts its own thread unless it names one; subjects are trimmed, blank ones dropped;
 * - an inbox holds what was sent to its reader, oldest first, marks acknowledgements and counts
 *   the unread; `unread` and `limit` narrow it;
 * - acknowledging refuses a message not in the reader's inbox and an unknown id;
 * - a thread reads whole for anyone; an unknown thread is not_found;
 * - search ignores case and accents, needs every term, answers newest first;
 * - restored messages of an earlier epoch are history (threads, search), never inbox;
 * - the memory bound forgets the oldest messages.
 */
import { describe, expect, it } from 'vitest';
import { fold, MessageBoard, type MessageEvent, type StoredMessage } from '../../../src/coordination/messages.js';
import { CapabilityError } from '../../../src/platform/errors.js';

function board(epoch = 'e1', maxKept?: number) {
  const events: MessageEvent[] = [];
  const messages = new MessageBoard({ epoch, record: (e) => events.push(e), now: () => Date.parse('2026-11-30T12:00:00Z'), ...(maxKept ? { maxKept } : {}) });
  return { messages, events };
}

const send = (b: MessageBoard, from: string, recipients: string[], body: string, extra: { thread?: string; subject?: string } = {}) =>
  b.send({ from, to: recipients, recipients, body, ...extra });

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof CapabilityError) return error.code;
    throw error;
  }
  return 'none';
}

describe('MessageBoard', () => {
  it('starts a thread with each message unless one is named, and journals what it sends', () => {
    const { messages, events } = board();
    const first = send(messages, 'p1', ['p2'], 'hello', { subject: '  plan ' });
    const reply = send(messages, 'p2', ['p1'], 'hi', { thread: first.id, subject: '  ' });
    expect(first).toMatchObject({ id: 'm1', thread: 'm1', subject: 'plan' });
    expect(reply).toMatchObject({ id: 'm2', thread: 'm1' });
    expect(reply.subject).toBeUndefined();
    expect(events.map((e) => e.event)).toEqual(['message', 'message']);
  });

  it('keeps an inbox per reader with acknowledgements and the unread count', () => {
    const { messages } = board();
    send(messages, 'p1', ['p2'], 'one');
    send(messages, 'p1', ['p3'], 'not for p2');
    send(messages, 'p3', ['p2', 'p1'], 'two');
    send(messages, 'overseer', ['p2'], 'three');
    const inbox = messages.inbox('p2', { unread: false, limit: 100 });
    expect(inbox.unread).toBe(3);
    expect(inbox.messages.map((m) => [m.body, m.acknowledged])).toEqual([
      ['one', false],
      ['two', false],
      ['three', false],
    ]);
    expect(messages.ack('p2', ['m1', 'm3', 'm1'])).toEqual(['m1', 'm3']);
    expect(messages.inbox('p2', { unread: true, limit: 100 }).messages.map((m) => m.id)).toEqual(['m4']);
    expect(messages.inbox('p2', { unread: false, limit: 2 }).messages.map((m) => [m.id, m.acknowledged])).toEqual([
      ['m3', true],
      ['m4', false],
    ]);
  });

  it('refuses to acknowledge what is not in the reader\'s inbox, and an unknown id', () => {
    const { messages } = board();
    send(messages, 'p1', ['p3'], 'for p3');
    expect(codeOf(() => messages.ack('p2', ['m1']))).toBe('refused');
    expect(codeOf(() => messages.ack('p2', ['m9']))).toBe('not_found');
  });

  it('reads a whole thread for anyone and refuses an unknown one', () => {
    const { messages } = board();
    const start = send(messages, 'p1', ['p2'], 'a');
    send(messages, 'p2', ['p1'], 'b', { thread: start.thread });
    send(messages, 'p3', ['all'], 'c', { thread: start.thread });
    expect(messages.thread('m1', 200).map((m) => m.body)).toEqual(['a', 'b', 'c']);
    expect(messages.thread('m1', 2).map((m) => m.body)).toEqual(['b', 'c']);
    expect(codeOf(() => messages.thread('nope', 10))).toBe('not_found');
  });

  it('searches without case or accents, every term, newest first', () => {
    const { messages } = board();
    send(messages, 'p1', ['p2'], 'Žluťoučký kůň úpěl');
    send(messages, 'p1', ['p2'], 'the horse', { subject: 'Kůň' });
    send(messages, 'p1', ['p2'], 'nothing here');
    expect(fold('Žluťoučký KŮŇ')).toBe('zlutoucky kun');
    expect(messages.search('kun', 10).map((m) => m.id)).toEqual(['m2', 'm1']);
    expect(messages.search('zlutoucky KUN', 10).map((m) => m.id)).toEqual(['m1']);
    expect(messages.search('kun missing', 10)).toEqual([]);
    expect(messages.search('kun', 1).map((m) => m.id)).toEqual(['m2']);
  });

  it('keeps messages of an earlier epoch as history, never in an inbox', () => {
    const { messages } = board('e2');
    const old: StoredMessage = { id: 'm7', thread: 'm7', from: 'p1', to: ['p2'], recipients: ['p2'], body: 'yesterday', at: '2026-11-29T12:00:00Z', epoch: 'e1' };
    messages.restore(old);
    expect(messages.inbox('p2', { unread: false, limit: 10 }).messages).toEqual([]);
    expect(messages.thread('m7', 10).map((m) => m.body)).toEqual(['yesterday']);
    expect(messages.search('yesterday', 10)).toHaveLength(1);
    expect(codeOf(() => messages.ack('p2', ['m7']))).toBe('refused');
    expect(send(messages, 'p1', ['p2'], 'today').id).toBe('m8');
  });

  it('forgets the oldest messages beyond its memory bound', () => {
    const { messages } = board('e1', 3);
    for (const body of ['a', 'b', 'c', 'd']) send(messages, 'p1', ['p2'], body);
    expect(messages.size).toBe(3);
    expect(codeOf(() => messages.thread('m1', 10))).toBe('not_found');
    expect(messages.inbox('p2', { unread: false, limit: 10 }).messages.map((m) => m.body)).toEqual(['b', 'c', 'd']);
  });
});
