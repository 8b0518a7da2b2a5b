/**
 * The journal's lines and where they are. Covers:
 * - append answers where each line went, and both readers fetch lines back by that position;
 *   a position that no longer holds an entry reads as null;
 * - the batched reader reads spans of at most READ_SPAN bytes, in the order asked, and reads no
 *   further than its consumer takes;
 * - a line a crash cut is ended before the next append, so that entry survives a restart;
 * - scanJournal gives every well-formed line with its position across chunk boundaries, skips
 *   cut, foreign and oversized lines, and nothing for a missing file.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, READ_SPAN, readJournal, scanJournal, type JournalEntry, type JournalLine } from '../../../src/coordination/journal.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function journalFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'majordomus-journal-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'coordination', 'messages.jsonl');
}

async function scanned(path: string): Promise<Array<{ entry: JournalEntry; line: JournalLine }>> {
  const all: Array<{ entry: JournalEntry; line: JournalLine }> = [];
  await scanJournal(path, (entry, line) => all.push({ entry, line }));
  return all;
}

describe('Journal', () => {
  it('answers where each appended line went and reads it back from there', async () => {
    const path = await journalFile();
    const journal = new Journal(path);
    cleanups.push(() => journal.close());
    const lines = ['one', 'twø', 'three'].map((word, n) => journal.append({ n, word }) as JournalLine);
    expect(lines[0]).toEqual({ offset: 0, length: Buffer.byteLength('{"n":0,"word":"one"}') });
    expect(journal.readSync([lines[2] as JournalLine, lines[0] as JournalLine])).toEqual([
      { n: 2, word: 'three' },
      { n: 0, word: 'one' },
    ]);
    expect(journal.readSync([{ offset: 3, length: 5 }, { offset: 10_000, length: 4 }])).toEqual([null, null]);
    const batches: Array<Array<[{ line: JournalLine }, JournalEntry | null]>> = [];
    for await (const batch of journal.read(lines.map((line) => ({ line })))) batches.push(batch);
    expect(batches.flat().map(([, entry]) => entry?.word)).toEqual(['one', 'twø', 'three']);
    expect(new Journal(join(path, '..', 'none.jsonl')).readSync(lines)).toEqual([null, null, null]);
  });

  it('reads back in spans of at most READ_SPAN bytes, only as far as its consumer goes', async () => {
    const path = await journalFile();
    const journal = new Journal(path);
    cleanups.push(() => journal.close());
    const text = 'x'.repeat(10_000);
    const lines = Array.from({ length: 100 }, (_, n) => journal.append({ n, text }) as JournalLine);
    const asked: number[] = [];
    const items = function* () {
      for (let n = 99; n >= 0; n -= 1) {
        asked.push(n);
        yield { n, line: lines[n] as JournalLine };
      }
    };
    const sizes: number[] = [];
    const seen: number[] = [];
    for await (const batch of journal.read(items())) {
      const offsets = batch.map(([{ line }]) => line.offset);
      sizes.push(Math.max(...batch.map(([{ line }]) => line.offset + line.length)) - Math.min(...offsets));
      seen.push(...batch.map(([{ n }, entry]) => (entry?.n === n ? n : -1)));
      if (seen.length >= 30) break;
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(READ_SPAN);
    expect(seen.slice(0, 30)).toEqual(Array.from({ length: 30 }, (_, i) => 99 - i));
    expect(asked.length).toBeLessThan(60); // the walk stopped with the reading
  });

  it('ends a line a crash cut before appending, so the next entry survives a restart', async () => {
    const path = await journalFile();
    const first = new Journal(path);
    first.append({ n: 1 });
    first.close();
    appendFileSync(path, '{"n":2,"cut mid');
    const second = new Journal(path);
    const line = second.append({ n: 3 }) as JournalLine;
    second.close();
    expect(second.readSync([line])).toEqual([{ n: 3 }]);
    expect((await readJournal(path)).map((entry) => entry.n)).toEqual([1, 3]);
  });
});

describe('scanJournal', () => {
  it('gives every well-formed line with its position across chunks, skipping cut, foreign and oversized lines', async () => {
    const path = await journalFile();
    const journal = new Journal(path);
    cleanups.push(() => journal.close());
    const body = 'ž'.repeat(5_000);
    const written = Array.from({ length: 300 }, (_, n) => journal.append({ n, body }) as JournalLine); // 3 MB: several chunks
    journal.close();
    appendFileSync(path, `[1,2]\nnot json\n\n{"n":"huge","body":"${'y'.repeat(1_200_000)}"}\n{"n":300}\n{"n":301,"cut`);
    const all = await scanned(path);
    expect(all.map(({ entry }) => entry.n)).toEqual([...Array.from({ length: 300 }, (_, n) => n), 300]);
    expect(all.slice(0, 300).map(({ line }) => line)).toEqual(written);
    const bytes = readFileSync(path);
    const last = all.at(-1) as { line: JournalLine };
    expect(bytes.toString('utf8', last.line.offset, last.line.offset + last.line.length)).toBe('{"n":300}');
  });

  it('reads a last line without its newline, and nothing from a missing file', async () => {
    const path = await journalFile();
    expect(await scanned(path)).toEqual([]);
    const journal = new Journal(path);
    journal.append({ n: 1 });
    journal.close();
    writeFileSync(path, '{"n":1}\n{"n":2}');
    expect((await scanned(path)).map(({ entry, line }) => [entry.n, line.offset])).toEqual([
      [1, 0],
      [2, 8],
    ]);
  });
});
