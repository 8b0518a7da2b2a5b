/**
 * Ids across checkouts. Each checkout numbers its own peers, claims and messages as it always has
 * (`p3`, `c12`, `m7`); another checkout sees them with the owner's short name appended
 * (`p3@feature-1a2b`). So nothing changes for a checkout alone, and an id names one thing on every
 * checkout: `qualify` turns an id a checkout wrote into its shared form, `localize` turns a shared
 * form back into this checkout's own id when it is one of ours.
 */

/** Names that mean the same on every checkout. */
const EVERYWHERE = new Set(['all', 'overseer']);

/** The shared form of an id written by the checkout `label`. */
export function qualify(id: string, label: string): string {
  return id.includes('@') || EVERYWHERE.has(id) ? id : `${id}@${label}`;
}

/** This checkout's own form of a shared id (`p3@mine` → `p3`); other checkouts' ids stay as they are. */
export function localize(id: string, ownLabel: string): string {
  const suffix = `@${ownLabel}`;
  return id.endsWith(suffix) ? id.slice(0, -suffix.length) : id;
}

/** An id as a checkout named `label` wrote it, seen from the checkout named `ownLabel`. */
export function seenFrom(id: string, label: string, ownLabel: string): string {
  return localize(qualify(id, label), ownLabel);
}

/** A thread a message started by itself is named after the message (`m7`), which is per checkout. */
export function threadSeenFrom(thread: string, label: string, ownLabel: string): string {
  return /^m\d+$/.test(thread) ? seenFrom(thread, label, ownLabel) : localize(thread, ownLabel);
}

/** The checkout label of a shared id (`p3@feature-1a2b` → `feature-1a2b`), or null for a local one. */
export function labelOf(id: string): string | null {
  const at = id.indexOf('@');
  return at < 0 ? null : id.slice(at + 1);
}
