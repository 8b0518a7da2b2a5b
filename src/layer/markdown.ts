/**
 * The two things the index reads from a Markdown body: the first H1 (a title) and the first
 * paragraph (a description), both as plain text. Line-based on purpose: the index needs a
 * heading and a paragraph, not a Markdown renderer.
 */

/** Longest description the index keeps, in characters. */
export const MAX_DESCRIPTION_LENGTH = 280;

const ATX_H1 = /^ {0,3}#(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const ATX_ANY = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;

/** Lines of `body` outside fenced code blocks, with their text; fences themselves are dropped. */
function* proseLines(body: string): Generator<string> {
  let fence: string | undefined;
  for (const raw of body.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const opener = FENCE_OPEN.exec(line)?.[1];
    if (fence !== undefined) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length && line.trim() === opener) fence = undefined;
      continue;
    }
    if (opener !== undefined) {
      fence = opener;
      continue;
    }
    yield line;
  }
}

/** The text of the first ATX level-1 heading (`# Title`), as plain text; '' when there is none. */
export function firstHeading(body: string): string {
  for (const line of proseLines(body)) {
    const match = ATX_H1.exec(line);
    if (match !== null) {
      const text = plainText(match[1] ?? '');
      if (text !== '') return text;
    }
  }
  return '';
}

/**
 * The first paragraph of prose (headings, code blocks, HTML comments and thematic breaks are
 * skipped), as plain text on one line, cut to MAX_DESCRIPTION_LENGTH; '' when there is none.
 */
export function firstParagraph(body: string): string {
  const paragraph: string[] = [];
  let inComment = false;
  for (const line of proseLines(body)) {
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === '') {
      if (paragraph.length > 0) break;
      continue;
    }
    if (trimmed.startsWith('<!--')) {
      if (paragraph.length > 0) break;
      inComment = !trimmed.includes('-->');
      continue;
    }
    if (ATX_ANY.test(line) || THEMATIC_BREAK.test(line)) {
      if (paragraph.length > 0) break;
      continue;
    }
    // A setext underline turns the paragraph so far into a heading: start again after it.
    if (paragraph.length > 0 && SETEXT_UNDERLINE.test(line)) {
      paragraph.length = 0;
      continue;
    }
    paragraph.push(trimmed.replace(/^(?:>[ \t]?)+/, '').replace(/^(?:[-*+]|\d{1,9}[.)])[ \t]+/, ''));
  }
  return truncate(plainText(paragraph.join(' ')), MAX_DESCRIPTION_LENGTH);
}

/** Inline Markdown to plain text: links, images, code spans, emphasis and tags lose their markup. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/`+([^`]+?)`+/g, '$1')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?!\w)/g, '$1$2')
    .replace(/(^|[^\w])_(?=\S)([^_]+?)(?<=\S)_(?!\w)/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Cuts `text` to at most `max` characters, ending with an ellipsis when it was cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  // Never cut a surrogate pair in half.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}
