/**
 * A client served alone in this process: `mcp --standalone`, or a process that cannot share. Its
 * layer stays fresh too: the build worker watches it and each new generation is swapped into this
 * runtime, the client told what changed.
 */
import { localSession } from '../mcp/local-backend.js';
import type { McpSession } from '../mcp/session.js';
import { Coordination } from '../coordination/coordination.js';
import { PeerBoard } from '../peers/board.js';
import { settings } from '../platform/settings.js';
import { startFreshness } from './layer-thread.js';
import type { Loaded } from '../runtime/load.js';
import { Runtime } from '../runtime/runtime.js';
import { runtimeSnapshot } from '../threads/snapshot.js';

export function aloneSession(loaded: Loaded, preferredPeerId: string | null = null): McpSession {
  const board = new PeerBoard();
  const coordination = Coordination.alone(loaded.layer.index.root, board);
  const runtime = new Runtime({ ...loaded, board, coordination, url: () => null, faultCapability: settings().faultCapability });
  const session = localSession(runtime, preferredPeerId);
  // The worker ends with the process (an exit hook); it never keeps it alive.
  startFreshness({
    snapshot: runtimeSnapshot(runtime),
    discovery: runtime.layer.index.discovery,
    onGeneration: (next) => {
      runtime.useGeneration(next.generation, next.layer);
      session.layerChanged(next.changed);
    },
  });
  return session;
}
