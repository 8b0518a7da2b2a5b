/**
 * Messages. Covers:
 * - a message starts its own thread unless it names one; subjects are trimmed, blank ones dropped;
 * - an inbox holds what was sent to its reader, oldest first, marks acknowledgements and counts
 *   the unread; `unread` and `limit` narrow it;
 * - acknowledging refuses a message not in the reader's inbox and an unknown id;
 * - a thread reads whole for anyone; an unknown thread is not_found;
 * - search ignores case and accents, needs every term, answers newest first;
 * - restored messages of an earlier epoch are history (threads, search), never inbox;
 * - memory holds text up to its bound in bytes: past it, the oldest messages are read back from
 *   the journal — thread, inbox, acknowledgement, search and the page's latest answer as before —
 *   and a search reads the journal only as far as it needs;
 * - without a journal, a message that leaves memory is forgotten everywhere, inbox counts too;
 * - a journal changed under the server leaves out what it no longer holds.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, type JournalEntry, type JournalLine, type JournalReader } from '../../../src/coordination/journal.js';
import { MessageBoard, type MessageEvent, type StoredMessage } from '../../../src/coordination/messages.js';
import { residentCost } from '../../../src/coordination/resident-texts.js';
import { fold } from '../../../src/coordination/search-text.js';
import { CapabilityError } from '../../../src/platform/errors.js';

const NOW = () => Date.parse('2026-11-30T12:00:00Z');
const ROOMY = 16 * 1024 * 1024;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function board(epoch = 'e1', memoryBytes = ROOMY) {
  const events: MessageEvent[] = [];
  const messages = new MessageBoard({ epoch, record: (e) => (events.push(e), null), now: NOW, memoryBytes });
  return { messages, events };
}

/** A board whose events go to a real journal file, as the server's do. */
async function journalled(memoryBytes: number, epoch = 'e1') {
  const dir = await mkdtemp(join(tmpdir(), 'majordomus-messages-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const journal = new Journal(join(dir, 'messages.jsonl'));
  cleanups.push(() => journal.close());
  const messages = new MessageBoard({ epoch, record: (e) => journal.append({ epoch, ...e }), journal, now: NOW, memoryBytes });
  return { messages, journal };
}

/** What one message of `body` costs in memory. */
const costOf = (body: string) => residentCost({ body });

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
    expect(messages.inbox('p2', { unread: false, limit: 100 }).unread).toBe(1);
  });

  it('refuses to acknowledge what is not in the reader\'s inbox, and an unknown id', () => {
    const { messages } = board();
    send(messages, 'p1', ['p3'], 'for p3');
    expect(codeOf(() => messages.ack('p2', ['m1']))).toBe('refused');
    expect(codeOf(() => messages.ack('p2', ['m9']))).toBe('not_found');
    expect(codeOf(() => messages.ack('p2', ['x']))).toBe('not_found');
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

  it('searches without case or accents, every term, newest first', async () => {
    const { messages } = board();
    send(messages, 'p1', ['p2'], 'Žluťoučký kůň úpěl');
    send(messages, 'p1', ['p2'], 'the horse', { subject: 'Kůň' });
    send(messages, 'p1', ['p2'], 'nothing here');
    expect(fold('Žluťoučký KŮŇ')).toBe('zlutoucky kun');
    expect((await messages.search('kun', 10)).map((m) => m.id)).toEqual(['m2', 'm1']);
    expect((await messages.search('zlutoucky KUN', 10)).map((m) => m.id)).toEqual(['m1']);
    expect(await messages.search('kun missing', 10)).toEqual([]);
    expect((await messages.search('kun', 1)).map((m) => m.id)).toEqual(['m2']);
  });

  it('keeps messages of an earlier epoch as history, never in an inbox', async () => {
    const { messages } = board('e2');
    const old: StoredMessage = { id: 'm7', thread: 'm7', from: 'p1', to: ['p2'], recipients: ['p2'], body: 'yesterday', at: '2026-11-29T12:00:00Z', epoch: 'e1' };
    expect(messages.restore(old, null)).toBe(true);
    expect(messages.restore({ ...old, id: 'm6' }, null)).toBe(false); // out of order: not filed
    expect(messages.inbox('p2', { unread: false, limit: 10 }).messages).toEqual([]);
    expect(messages.thread('m7', 10).map((m) => m.body)).toEqual(['yesterday']);
    expect(await messages.search('yesterday', 10)).toHaveLength(1);
    expect(codeOf(() => messages.ack('p2', ['m7']))).toBe('refused');
    expect(send(messages, 'p1', ['p2'], 'today').id).toBe('m8');
  });

  it('holds text up to its bound in bytes and reads older messages back from the journal for every read', async () => {
    const body = (n: number) => `message ${n} ${'é'.repeat(1_000)}`;
    const { messages } = await journalled(3 * costOf(body(10)));
    send(messages, 'p1', ['p2'], 'the oldest names the quarantined falcon', { subject: 'first' });
    for (let n = 2; n <= 20; n += 1) send(messages, n % 2 === 0 ? 'p2' : 'p1', n % 2 === 0 ? ['p1'] : ['p2'], body(n), { thread: 'm1' });
    expect(messages.memory).toMatchObject({ held: 3, indexed: 20 });
    expect(messages.memory.heldBytes).toBeLessThanOrEqual(3 * costOf(body(10)));

    expect(messages.thread('m1', 200).map((m) => m.id)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i + 1}`));
    expect(messages.thread('m1', 200)[0]).toMatchObject({ id: 'm1', subject: 'first', body: 'the oldest names the quarantined falcon', from: 'p1', to: ['p2'] });
    expect((await messages.search('QUARANTINED falcon', 10)).map((m) => m.id)).toEqual(['m1']);
    expect((await messages.search('message', 4)).map((m) => m.id)).toEqual(['m20', 'm19', 'm18', 'm17']);
    expect(messages.recent(5).map((m) => m.id)).toEqual(['m16', 'm17', 'm18', 'm19', 'm20']);

    const inbox = messages.inbox('p2', { unread: false, limit: 3 });
    expect([inbox.unread, inbox.messages.map((m) => m.id)]).toEqual([10, ['m15', 'm17', 'm19']]);
    expect(messages.ack('p2', ['m1', 'm3'])).toEqual(['m1', 'm3']);
    expect(messages.inbox('p2', { unread: true, limit: 2 })).toMatchObject({ unread: 8, messages: [{ id: 'm17', acknowledged: false }, { id: 'm19', acknowledged: false }] });
    expect(messages.inbox('p2', { unread: true, limit: 100 }).messages.map((m) => m.id)).toEqual(['m5', 'm7', 'm9', 'm11', 'm13', 'm15', 'm17', 'm19']);
    expect(messages.inbox('p2', { unread: false, limit: 100 }).messages.slice(0, 2)).toMatchObject([{ id: 'm1', acknowledged: true }, { id: 'm3', acknowledged: true }]);
    expect(codeOf(() => messages.ack('p1', ['m1']))).toBe('refused');
  });

  it('reads the journal for a search only as far as it needs, newest first, and stops when the caller goes', async () => {
    const { journal } = await journalled(0);
    let read = 0;
    const counting: JournalReader = {
      readSync: (lines) => journal.readSync(lines),
      read: async function* <T extends { line: JournalLine }>(items: Iterable<T>) {
        for await (const batch of journal.read(items)) {
          read += batch.length;
          yield batch as Array<[T, JournalEntry | null]>;
        }
      },
    };
    const messages = new MessageBoard({ epoch: 'e1', record: (e) => journal.append(e), journal: counting, now: NOW, memoryBytes: 0 });
    for (let n = 1; n <= 400; n += 1) send(messages, 'p1', ['p2'], `${n % 100 === 0 ? 'needle' : 'hay'} ${'h'.repeat(2_000)}`);
    expect((await messages.search('needle', 2)).map((m) => m.id)).toEqual(['m400', 'm300']);
    expect(read).toBeLessThan(250); // one span of about 110 lines held both
    read = 0;
    expect((await messages.search('needle', 10)).map((m) => m.id)).toEqual(['m400', 'm300', 'm200', 'm100']);
    expect(read).toBe(400);
    const gone = new AbortController();
    gone.abort();
    expect((await messages.search('needle', 10, gone.signal)).length).toBeLessThan(4);
  });

  it('forgets a message that leaves memory when there is no journal to read it back from', async () => {
    const { messages } = board('e1', 2 * costOf('x'.repeat(100)));
    for (let n = 1; n <= 4; n += 1) send(messages, 'p1', ['p2'], 'x'.repeat(100));
    expect(messages.memory).toMatchObject({ held: 2, indexed: 4 });
    expect(codeOf(() => messages.thread('m1', 10))).toBe('not_found');
    expect(codeOf(() => messages.ack('p2', ['m1']))).toBe('not_found');
    expect(messages.inbox('p2', { unread: false, limit: 10 })).toMatchObject({ unread: 2, messages: [{ id: 'm3' }, { id: 'm4' }] });
    expect((await messages.search('xxx', 10)).map((m) => m.id)).toEqual(['m4', 'm3']);
    expect(messages.recent(10).map((m) => m.id)).toEqual(['m3', 'm4']);
  });

  it('leaves out what a journal changed under the server no longer holds', async () => {
    const { messages, journal } = await journalled(0);
    send(messages, 'p1', ['p2'], 'one');
    send(messages, 'p1', ['p2'], 'two');
    writeFileSync(journal.path, `${'{"rotated":true}\n'.repeat(20)}`);
    expect(messages.recent(10)).toEqual([]);
    expect(messages.thread('m1', 10)).toEqual([]);
    expect(messages.inbox('p2', { unread: false, limit: 10 })).toEqual({ unread: 2, messages: [] });
    expect(await messages.search('one', 10)).toEqual([]);
  });
});
