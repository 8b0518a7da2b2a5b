/**
 * The local half in the root .gitignore (src/init/gitignore.ts). Covers: a new file; an added
 * line (after ending the last line, with the file's CRLF); each spelling that already ignores the
 * directory (with or without leading or trailing slash, `/*`, `/**`, surrounding spaces) leaves
 * the text alone; a line that ignores something else does not count.
 */
import { describe, expect, it } from 'vitest';
import { mergeIgnoreLine } from '../../../src/init/gitignore.js';

describe('mergeIgnoreLine', () => {
  it('writes a new .gitignore, or appends the line', () => {
    expect(mergeIgnoreLine(null, '.ai/local')).toBe('.ai/local/\n');
    expect(mergeIgnoreLine('', '.ai/local')).toBe('.ai/local/\n');
    expect(mergeIgnoreLine('dist/\n', '.ai/local')).toBe('dist/\n.ai/local/\n');
    expect(mergeIgnoreLine('dist/', '.ai/local')).toBe('dist/\n.ai/local/\n');
    expect(mergeIgnoreLine('dist/\r\n', '.ai/local')).toBe('dist/\r\n.ai/local/\r\n');
    expect(mergeIgnoreLine('.ai/local-other/\n.ai/\n', '.ai/local')).toBe('.ai/local-other/\n.ai/\n.ai/local/\n');
  });

  it.each(['.ai/local', '.ai/local/', '/.ai/local', '/.ai/local/', '.ai/local/*', '/.ai/local/**', '  .ai/local/  '])(
    'keeps a .gitignore that ignores it already as %j',
    (line) => {
      const text = `dist/\n${line}\nnode_modules/\n`;
      expect(mergeIgnoreLine(text, '.ai/local')).toBe(text);
    },
  );
});
