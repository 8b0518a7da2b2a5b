/**
 * Adds the layer's local half (`.ai/local/`: the lease, harness sessions, state) to the root
 * `.gitignore`, unless a line there already ignores exactly that directory.
 */
import { lineEnding, withFinalNewline } from './text.js';

/** The spellings of one line that ignore the directory `path` (relative to the root, no trailing slash). */
function spellings(path: string): Set<string> {
  return new Set([path, `${path}/`, `/${path}`, `/${path}/`, `${path}/*`, `/${path}/*`, `${path}/**`, `/${path}/**`]);
}

/** `text` (null: no .gitignore yet) with a line ignoring `localPath`; the same text when one is there. */
export function mergeIgnoreLine(text: string | null, localPath: string): string {
  const line = `${localPath}/`;
  if (text === null) return `${line}\n`;
  const known = spellings(localPath);
  if (text.split(/\r?\n/).some((existing) => known.has(existing.trim()))) return text;
  const eol = lineEnding(text);
  const ended = withFinalNewline(text, eol);
  return `${ended}${line}${eol}`;
}
