/**
 * How the peer that spawned a session is told that one of its turns ended, without polling: as
 * Claude Code's `notifications/claude/channel` when its client declared the channel, else as a
 * structured `notifications/majordomus/turn`. The channel's text is a fixed template: nothing the
 * agent printed goes into it (an agent must not write into its spawner's context through a path
 * the spawner never called); what varies rides `meta`, whose keys are `[A-Za-z0-9_]` (Claude Code
 * drops others). An executor task's turn is the task board's to announce (it quotes the question).
 */
import { CHANNEL_CAPABILITY, type PeerNotice } from '../peers/notice.js';
import { turnUri } from './resource-uris.js';
import type { SessionTurns } from './session.js';

export const TURN_NOTIFICATION = 'notifications/majordomus/turn';
const CHANNEL_NOTIFICATION = 'notifications/claude/channel';

/** The notice for the spawner of `view`'s session that its turn `turn` ended; null when nobody is to be told. */
export function turnEndNotice(view: SessionTurns, turn: number): PeerNotice | null {
  if (view.spawnedBy === null || view.agent === 'executor') return null;
  const ended = view.turns.find((t) => t.turn === turn);
  if (ended === undefined || ended.status === 'running') return null;
  const exitCode = ended.done?.exitCode ?? null;
  const outcome = ended.status === 'exited' ? `exited ${exitCode ?? 'without a code'}` : ended.status;
  const result = turnUri(view.session, turn, 'result');
  const content = [
    `majordomus session ${view.session} (profile ${view.profile}): turn ${turn} ${outcome}.`,
    `Read its answer at ${result}, or with session_read {session: "${view.session}"}; continue it with session_send.`,
  ].join('\n');
  return {
    peer: view.spawnedBy,
    method: CHANNEL_NOTIFICATION,
    params: {
      content,
      meta: { source: 'majordomus', session: view.session, turn: String(turn), status: ended.status, ...(exitCode === null ? {} : { exit_code: String(exitCode) }) },
    },
    requires: CHANNEL_CAPABILITY,
    fallback: {
      method: TURN_NOTIFICATION,
      params: { event: 'ended', session: view.session, profile: view.profile, turn, status: ended.status, ...(exitCode === null ? {} : { exitCode }), uri: result },
    },
  };
}
