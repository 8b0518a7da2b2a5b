/**
 * How messages are searched: every term of the query, ignoring case and accents, within the
 * subject and body. Shared by what is held in memory and what is read back from the journal, so
 * both match alike.
 */

/** Lower case without accents: `Žluťoučký` → `zlutoucky`. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** The terms of a query, folded. */
export function searchTerms(query: string): string[] {
  return fold(query).split(/\s+/).filter(Boolean);
}

/** The folded text a message's terms are looked for in. */
export function searchText(message: { subject?: string; body: string }): string {
  return fold(`${message.subject ?? ''}\n${message.body}`);
}

export function matchesAll(text: string, terms: readonly string[]): boolean {
  return terms.every((term) => text.includes(term));
}
