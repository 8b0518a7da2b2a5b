/**
 * The URIs a session is read at (the seed's resource surface, under `majordomus://sessions`): the
 * index, a session (its status), one view of its latest turn, and one view of any turn. The
 * capabilities declare these templates (src/capabilities/harness.ts) and the table names the URIs
 * a change invalidates, so a client subscribed to one hears `notifications/resources/updated`.
 */

/** The views of a turn a resource serves. */
export const RESOURCE_PARTS = ['status', 'result', 'transcript', 'stderr'] as const;
export type ResourcePart = (typeof RESOURCE_PARTS)[number];

export const SESSIONS_URI = 'majordomus://sessions';
export const SESSION_URI_TEMPLATE = 'majordomus://sessions/{session}';
export const SESSION_PART_URI_TEMPLATE = 'majordomus://sessions/{session}/{part}';
export const TURN_PART_URI_TEMPLATE = 'majordomus://sessions/{session}/turns/{turn}/{part}';

/** The session's own URI: its status (what session_status answers for the latest turn). */
export function sessionUri(session: string): string {
  return `${SESSIONS_URI}/${session}`;
}

/** One view of one turn. */
export function turnUri(session: string, turn: number, part: ResourcePart): string {
  return `${sessionUri(session)}/turns/${turn}/${part}`;
}

/**
 * What a turn starting or ending changes: the index, the session, every view of its latest turn
 * and every view of that turn. An earlier turn's views never change once it ended.
 */
export function urisOfTurn(session: string, turn: number): string[] {
  const base = sessionUri(session);
  return [SESSIONS_URI, base, ...RESOURCE_PARTS.map((part) => `${base}/${part}`), ...RESOURCE_PARTS.map((part) => turnUri(session, turn, part))];
}

/** What a session going (reaped, or dropped past retention) changes: everything it was read at. */
export function urisOfSession(session: string, turns: readonly number[]): string[] {
  const base = sessionUri(session);
  return [SESSIONS_URI, base, ...RESOURCE_PARTS.map((part) => `${base}/${part}`), ...turns.flatMap((turn) => RESOURCE_PARTS.map((part) => turnUri(session, turn, part)))];
}
