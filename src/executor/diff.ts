/**
 * The unified-style diff edit_file answers with. The edit knows where each replacement lands, so
 * the diff is built from those places (no general diff algorithm): the whole lines each group of
 * nearby replacements touches, before and after, with three lines of context.
 */

const CONTEXT = 3;

interface Change {
  /** First and last old line touched (0-based, inclusive). */
  first: number;
  last: number;
  /** The new lines that take their place. */
  replacement: string[];
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) starts.push(index + 1);
  return starts;
}

/** The 0-based line holding the character at `offset`. */
function lineOf(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/** The text from `start` to `end` of `before` with the replacements at `offsets` made. */
function rebuild(before: string, start: number, end: number, offsets: number[], oldString: string, newString: string): string {
  let text = '';
  let cursor = start;
  for (const offset of offsets) {
    text += before.slice(cursor, offset) + newString;
    cursor = offset + oldString.length;
  }
  return text + before.slice(cursor, end);
}

/**
 * The changes of replacing `oldString` (non-empty) with `newString` at each of `offsets` (sorted,
 * non-overlapping) in `before`, grouped by the lines they touch.
 */
function changesOf(before: string, offsets: number[], oldString: string, newString: string): Change[] {
  const starts = lineStarts(before);
  const lineEnd = (line: number): number => (line + 1 < starts.length ? (starts[line + 1] as number) : before.length);
  const changes: Change[] = [];
  let index = 0;
  while (index < offsets.length) {
    const groupStart = index;
    const first = lineOf(starts, offsets[index] as number);
    let last = first;
    let replaced: string;
    for (;;) {
      // Replacements on the lines already touched belong to the same change.
      while (index < offsets.length && lineOf(starts, offsets[index] as number) <= last) {
        last = Math.max(last, lineOf(starts, (offsets[index] as number) + oldString.length - 1));
        index++;
      }
      replaced = rebuild(before, starts[first] as number, lineEnd(last), offsets.slice(groupStart, index), oldString, newString);
      // A replacement that removes a line break joins the next line to this change.
      if (replaced === '' || replaced.endsWith('\n') || lineEnd(last) >= before.length) break;
      last++;
    }
    changes.push({ first, last, replacement: splitLines(replaced) });
  }
  return changes;
}

/** A unified-style diff of the replacement, headed with the file's name; at most `maxLines` lines of hunks. */
export function replacementDiff(name: string, before: string, offsets: number[], oldString: string, newString: string, maxLines = 400): string {
  const oldLines = splitLines(before);
  const changes = changesOf(before, offsets, oldString, newString);
  const out: string[] = [`--- a/${name}`, `+++ b/${name}`];
  let shift = 0;
  let index = 0;
  while (index < changes.length) {
    const group = [changes[index] as Change];
    index++;
    while (index < changes.length && (changes[index] as Change).first - (group.at(-1) as Change).last <= 2 * CONTEXT + 1) group.push(changes[index++] as Change);
    const start = Math.max(0, (group[0] as Change).first - CONTEXT);
    const end = Math.min(oldLines.length - 1, (group.at(-1) as Change).last + CONTEXT);
    const body: string[] = [];
    let cursor = start;
    let added = 0;
    let removed = 0;
    for (const change of group) {
      for (; cursor < change.first; cursor++) body.push(` ${oldLines[cursor]}`);
      for (; cursor <= change.last; cursor++, removed++) body.push(`-${oldLines[cursor]}`);
      body.push(...change.replacement.map((line) => `+${line}`));
      added += change.replacement.length;
    }
    for (; cursor <= end; cursor++) body.push(` ${oldLines[cursor]}`);
    const oldCount = end - start + 1;
    const newCount = oldCount - removed + added;
    out.push(`@@ -${start + 1},${oldCount} +${start + 1 + shift},${newCount} @@`, ...body);
    shift += added - removed;
  }
  if (out.length - 2 > maxLines) {
    const hidden = out.length - 2 - maxLines;
    return [...out.slice(0, maxLines + 2), `… (${hidden} more diff lines)`].join('\n');
  }
  return out.join('\n');
}
