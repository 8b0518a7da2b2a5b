/**
 * The history of claims and messages: JSON lines under `<local>/coordination/`, appended as things
 * happen, so a successor restores the state after a takeover and a person can read what happened.
 * Each event is written before its caller is answered (one synchronous write of one line to a file
 * kept open for appending): a server killed the moment after it answered has still kept what it
 * answered about. The files are the user's (mode 0600: messages may say anything).
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { log } from '../platform/log.js';

export class Journal {
  readonly path: string;
  #fd: number | null = null;
  #warned = false;

  constructor(path: string) {
    this.path = path;
  }

  /** Appends one event (an object that serialises to one line). */
  append(entry: object): void {
    try {
      if (this.#fd === null) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        this.#fd = openSync(this.path, 'a', 0o600);
      }
      writeSync(this.#fd, `${JSON.stringify(entry)}\n`);
    } catch (error) {
      // The state in memory still serves; only the history is incomplete. Said once, not per event.
      if (this.#warned) return;
      this.#warned = true;
      log.warn(`cannot append to ${this.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/** Every well-formed line of a journal, in order; none when it does not exist. */
export async function readJournal(path: string): Promise<Array<Record<string, unknown>>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  const entries: Array<Record<string, unknown>> = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) entries.push(value as Record<string, unknown>);
      else skipped += 1;
    } catch {
      skipped += 1; // a line cut by a crash mid-write, or an edit by hand
    }
  }
  if (skipped > 0) log.warn(`${path}: skipped ${skipped} unreadable line(s)`);
  return entries;
}
