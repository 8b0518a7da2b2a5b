/**
 * The live page's main-thread part, read from the runtime at call time: the peer board, claims
 * (with the conflicts among them), messages and the overseer's inbox, the layer's generation and
 * diagnostics. Nothing here is cached: the HTTP thread asks only when something changed.
 */
import { OVERSEER } from '../coordination/schemas.js';
import type { Runtime } from '../runtime/runtime.js';
import { conflictPairs, PAGE_LIMITS, type PageHostState } from './state.js';

const STARTED_AT = new Date(Date.now() - process.uptime() * 1000).toISOString();

/** The main thread's part of the live page, read now. */
export function pageHostState(runtime: Pick<Runtime, 'layer' | 'generation' | 'board' | 'coordination'>): PageHostState {
  const index = runtime.layer.index;
  const coordination = runtime.coordination;
  const claims = coordination?.claims() ?? [];
  const inbox = coordination?.inbox(null, { unread: false, limit: PAGE_LIMITS.inbox }) ?? { you: OVERSEER, unread: 0, messages: [] };
  return {
    generation: runtime.generation,
    objects: index.objects.length,
    diagnostics: index.diagnostics.slice(0, PAGE_LIMITS.diagnostics).map(({ severity, code, path, message }) => ({ severity, code, path, message })),
    diagnosticCount: index.diagnostics.length,
    startedAt: STARTED_AT,
    pid: process.pid,
    peers: (runtime.board?.list() ?? []).slice(0, PAGE_LIMITS.peers),
    claims: claims.slice(0, PAGE_LIMITS.claims),
    conflicts: conflictPairs(coordination?.overlapping() ?? []),
    messages: coordination?.recent(PAGE_LIMITS.messages) ?? [],
    inbox: { unread: inbox.unread, messages: inbox.messages },
  };
}
