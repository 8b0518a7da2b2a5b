/**
 * The history of claims and messages: JSON lines under `<local>/coordination/`, appended as things
 * happen, so a successor restores the state after a takeover and a person can read what happened.
 * Appends are batched (one write per turn of the event loop) and never wait on the caller; the
 * files are the user's (mode 0600: messages may say anything).
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { log } from '../log.js';

export class Journal {
  readonly path: string;
  #pending: string[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #ready: Promise<unknown> | null = null;

  constructor(path: string) {
    this.path = path;
  }

  /** Appends one event (an object that serialises to one line). */
  append(entry: object): void {
    this.#pending.push(`${JSON.stringify(entry)}\n`);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const text = this.#pending.join('');
      this.#pending = [];
      this.#writing = this.#writing.then(() => this.#write(text));
    });
  }

  /** Resolves once everything appended so far is on disk. */
  async flush(): Promise<void> {
    while (this.#scheduled || this.#pending.length > 0) await new Promise((resolve) => setImmediate(resolve));
    await this.#writing;
  }

  async #write(text: string): Promise<void> {
    try {
      this.#ready ??= mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      await this.#ready;
      await appendFile(this.path, text, { mode: 0o600 });
    } catch (error) {
      log.warn(`cannot append to ${this.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
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
