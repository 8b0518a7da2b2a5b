/** The diff edit_file answers: hunks with three lines of context, one per group of nearby replacements. */
import { describe, expect, it } from 'vitest';
import { replacementDiff } from '../../../src/executor/diff.js';

const numbered = (count: number): string => Array.from({ length: count }, (_, index) => `l${index + 1}`).join('\n') + '\n';

function diffOf(before: string, oldString: string, newString: string): string {
  const offsets: number[] = [];
  for (let at = before.indexOf(oldString); at !== -1; at = before.indexOf(oldString, at + oldString.length)) offsets.push(at);
  return replacementDiff('f.txt', before, offsets, oldString, newString);
}

describe('the replacement diff', () => {
  it('shows a one-line change with three lines of context on each side', () => {
    expect(diffOf(numbered(10), 'l5\n', 'five\n')).toBe(['--- a/f.txt', '+++ b/f.txt', '@@ -2,7 +2,7 @@', ' l2', ' l3', ' l4', '-l5', '+five', ' l6', ' l7', ' l8'].join('\n'));
  });

  it('counts added and removed lines in the header and shifts later hunks', () => {
    const before = numbered(30);
    const diff = diffOf(before.replace('l3\n', 'X\n').replace('l25\n', 'X\n'), 'X\n', 'a\nb\n');
    expect(diff).toContain('@@ -1,6 +1,7 @@');
    expect(diff).toContain('@@ -22,7 +23,8 @@');
  });

  it('merges replacements close together into one hunk', () => {
    const diff = diffOf('a\nX\nb\nc\nX\nd\n', 'X', 'Y');
    expect(diff.match(/^@@/gm)).toHaveLength(1);
    expect(diff).toContain('@@ -1,6 +1,6 @@');
  });

  it('shows a removed line break as the two lines becoming one', () => {
    expect(diffOf('a\nb\nc\n', 'b\n', 'b')).toBe(['--- a/f.txt', '+++ b/f.txt', '@@ -1,3 +1,2 @@', ' a', '-b', '-c', '+bc'].join('\n'));
  });

  it('shows a deleted line with no replacement line', () => {
    expect(diffOf('a\nb\nc\n', 'b\n', '')).toBe(['--- a/f.txt', '+++ b/f.txt', '@@ -1,3 +1,2 @@', ' a', '-b', ' c'].join('\n'));
  });

  it('caps a long diff and says how much it left out', () => {
    const before = Array.from({ length: 1000 }, () => 'X').join('\n\n\n\n\n\n\n\n\n');
    const diff = diffOf(before, 'X', 'Y');
    expect(diff.split('\n').length).toBe(403);
    expect(diff).toMatch(/… \(\d+ more diff lines\)$/);
  });
});
