/**
 * What the last build made of each layer file (its object, or the diagnostics refusing it), keyed
 * by the file's kind, path identity and a digest of its bytes, so that the next build parses and
 * validates only the files whose bytes changed (docs/LAYER.md, "Freshness"). A file a build did
 * not parse or reuse (gone, unreadable, no longer a layer file) is forgotten when it finishes.
 */
import type { Diagnostic, LayerObject } from './types.js';

/** What one file's bytes make. Kept objects are shared between builds: never mutated. */
export type Outcome = { object: LayerObject } | { diagnostics: Diagnostic[] };

interface Entry {
  key: string;
  outcome: Outcome;
}

export class ParsedFiles {
  #kept = new Map<string, Entry>();
  #next = new Map<string, Entry>();
  #reused = 0;

  /** Starts a build: what it neither reuses nor remembers is dropped at `finish`. */
  begin(): void {
    this.#next = new Map();
    this.#reused = 0;
  }

  /** The outcome kept for `path` when its key is still `key`. */
  reuse(path: string, key: string): Outcome | undefined {
    const entry = this.#kept.get(path);
    if (entry === undefined || entry.key !== key) return undefined;
    this.#next.set(path, entry);
    this.#reused += 1;
    return entry.outcome;
  }

  remember(path: string, key: string, outcome: Outcome): void {
    this.#next.set(path, { key, outcome });
  }

  finish(): void {
    this.#kept = this.#next;
    this.#next = new Map();
  }

  /** How many files the last build reused (the rest were parsed). */
  get reused(): number {
    return this.#reused;
  }

  get size(): number {
    return this.#kept.size;
  }
}
