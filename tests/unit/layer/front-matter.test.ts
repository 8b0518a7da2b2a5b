/**
 * Front matter and the Markdown reads:
 * - front matter exists only when the first line is ---, ends at the next --- line, and is YAML
 *   parsed by a real parser (CRLF and a BOM are accepted, an empty block is an empty mapping);
 * - YAML errors name the line of the file;
 * - the title is the first H1 outside code blocks; the description is the first paragraph, as
 *   plain text.
 */
import { describe, expect, it } from 'vitest';
import { splitFrontMatter } from '../../../src/layer/front-matter.js';
import { firstHeading, firstParagraph, plainText } from '../../../src/layer/markdown.js';

describe('splitFrontMatter', () => {
  it('reads a YAML mapping between --- lines and returns the body after it', () => {
    expect(splitFrontMatter('---\ntitle: "A: B"\ntags: [x]\n---\n# Body\n')).toEqual({
      kind: 'present',
      data: { title: 'A: B', tags: ['x'] },
      body: '# Body\n',
    });
  });

  it('accepts CRLF line ends and a byte order mark', () => {
    expect(splitFrontMatter('\uFEFF---\r\ntitle: x\r\n---\r\nbody')).toMatchObject({ kind: 'present', data: { title: 'x' }, body: 'body' });
  });

  it('treats an empty block as an empty mapping and a file without --- as body only', () => {
    expect(splitFrontMatter('---\n---\ntext')).toEqual({ kind: 'present', data: {}, body: 'text' });
    expect(splitFrontMatter('# Title\n---\n')).toEqual({ kind: 'none', body: '# Title\n---\n' });
  });

  it('refuses an unclosed block and a block that is not a mapping', () => {
    expect(splitFrontMatter('---\ntitle: x\n')).toMatchObject({ kind: 'error', code: 'malformed_front_matter' });
    expect(splitFrontMatter('---')).toMatchObject({ kind: 'error', code: 'malformed_front_matter' });
    expect(splitFrontMatter('---\njust text\n---\n')).toMatchObject({ kind: 'error', code: 'malformed_front_matter' });
  });

  it('names the line of the file where the YAML breaks', () => {
    const result = splitFrontMatter('---\ntitle: x\ntags: [a\n---\nbody\n');
    expect(result.kind).toBe('error');
    expect(result).toMatchObject({ code: 'malformed_yaml' });
    expect((result as { message: string }).message).toMatch(/line [34]/);
  });
});

describe('Markdown reads', () => {
  it('takes the first H1 outside fenced code, without its markup', () => {
    expect(firstHeading('```\n# in code\n```\n## Second level\n# The **real** `title` #\n')).toBe('The real title');
    expect(firstHeading('No heading\n')).toBe('');
  });

  it('takes the first paragraph after headings, comments and code, as one plain line', () => {
    expect(firstParagraph('# T\n<!-- a\ncomment -->\n\n```\ncode\n```\n> Quoted [text](u)\n> more _here_\n\nNext.\n')).toBe('Quoted text more here');
    expect(firstParagraph('Setext heading\n===\n\nParagraph.\n')).toBe('Paragraph.');
    expect(firstParagraph('# Only a title\n')).toBe('');
  });

  it('turns inline Markdown into plain text but leaves snake_case alone', () => {
    expect(plainText('**bold**, *em*, `code`, ![alt](img.png), [ref][1], <b>tag</b>, snake_case_name')).toBe(
      'bold, em, code, alt, ref, tag, snake_case_name',
    );
  });
});
