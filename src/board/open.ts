/**
 * Whether and how this checkout shares its board (docs/SCALE.md): through a NATS server when
 * `MAJORDOMUS_FEDERATION_URL` or the manifest's `federation.url` names one (every checkout of the
 * repository, on any machine), else through git's common directory (every worktree of the
 * repository on this machine); not at all outside git or with `MAJORDOMUS_BOARD=checkout`.
 */
import { join } from 'node:path';
import { MANIFEST_PATH } from '../layer/identity.js';
import { readManifest } from '../layer/manifest.js';
import { log } from '../platform/log.js';
import { settings } from '../platform/settings.js';
import type { Coordination } from '../coordination/coordination.js';
import type { PeerBoard } from '../peers/board.js';
import type { BoardTransport } from './contract.js';
import { checkoutIdentity, gitCommonDir, repositoryName, type CheckoutIdentity } from './identity.js';
import { SharedBoard } from './replica.js';
import { WorktreeTransport } from './worktree-transport.js';

export interface OpenSharedBoard {
  /** The checkout's real root (the layer's). */
  root: string;
  board: PeerBoard;
  coordination: Coordination;
  onChange?: () => void;
}

/** Shares the board when this checkout can; null when it stays alone (and why is logged). */
export async function openSharedBoard(options: OpenSharedBoard): Promise<SharedBoard | null> {
  const { boardScope, federationUrl, presenceTtlMs, clockSkewMs } = settings();
  if (boardScope === 'checkout') return null;
  const identity = await checkoutIdentity(options.root);
  const transport = await chooseTransport(options.root, identity, federationUrl, presenceTtlMs, clockSkewMs);
  if (transport === null) return null;
  const shared = new SharedBoard({ transport, identity, board: options.board, coordination: options.coordination, presenceTtlMs, ...(options.onChange ? { onChange: options.onChange } : {}) });
  try {
    await shared.start();
  } catch (error) {
    log.warn(`cannot share the board (${transport.where}): ${error instanceof Error ? error.message : String(error)}; this checkout's board is its own`);
    await shared.close().catch(() => undefined);
    return null;
  }
  return shared;
}

async function chooseTransport(root: string, identity: CheckoutIdentity, envUrl: string | null, ttlMs: number, skewMs: number): Promise<BoardTransport | null> {
  const manifest = await readManifest(join(root, MANIFEST_PATH)).catch(() => null);
  const url = envUrl ?? manifest?.federation.url ?? null;
  if (url !== null) {
    const repository = await repositoryName(root, manifest?.federation.repository ?? null);
    if (repository === null) {
      log.warn('federation is off: the repository has no commit yet and the manifest names no federation.repository');
    } else {
      // Loaded only by a server that federates: nobody else pays for the NATS client.
      const { NatsTransport } = await import('./nats-transport.js');
      return new NatsTransport({ url, repository, self: identity.id, presenceTtlMs: ttlMs, clockSkewMs: skewMs });
    }
  }
  const common = await gitCommonDir(root);
  return common === null ? null : new WorktreeTransport(join(common, 'majordomus', 'board'), identity.id);
}
