/**
 * A notification for one peer, whoever raises it (a claim that overlaps, a message, a task that
 * asks or ends): the server delivers it to the peer's stdio or `/mcp` stream.
 */

/** The experimental client capability a channel notice needs. */
export const CHANNEL_CAPABILITY = 'claude/channel';

/** A notification for one peer; `requires` names the experimental capability its client must have declared. */
export interface PeerNotice {
  peer: string;
  method: string;
  params: Record<string, unknown>;
  requires: string | null;
  /** What the peer gets instead when its client did not declare `requires`; nothing when absent. */
  fallback?: { method: string; params: Record<string, unknown> };
}
