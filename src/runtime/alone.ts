/** A client served alone in this process: `mcp --standalone`, or a process that cannot share. */
import { localSession } from '../mcp/local-backend.js';
import type { McpSession } from '../mcp/session.js';
import { Coordination } from '../coordination/coordination.js';
import { PeerBoard } from '../peers/board.js';
import { settings } from '../settings.js';
import type { Loaded } from './load.js';
import { Runtime } from './runtime.js';

export function aloneSession(loaded: Loaded, preferredPeerId: string | null = null): McpSession {
  const board = new PeerBoard();
  const coordination = Coordination.alone(loaded.layer.index.root, board);
  const runtime = new Runtime({ ...loaded, board, coordination, url: () => null, faultCapability: settings().faultCapability });
  return localSession(runtime, preferredPeerId);
}
