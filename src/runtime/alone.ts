/** A client served alone in this process: `mcp --standalone`, or a process that cannot share. */
import { localSession } from '../mcp/local-backend.js';
import type { McpSession } from '../mcp/session.js';
import { PeerBoard } from '../peers/board.js';
import { settings } from '../settings.js';
import type { Loaded } from './load.js';
import { Runtime } from './runtime.js';

export function aloneSession(loaded: Loaded, preferredPeerId: string | null = null): McpSession {
  const runtime = new Runtime({ ...loaded, board: new PeerBoard(), url: () => null, faultCapability: settings().faultCapability });
  return localSession(runtime, preferredPeerId);
}
