/**
 * What the coordination of one checkout needs from a board it shares with other checkouts
 * (worktrees of the repository, clones on other machines): src/board/ implements it over a ledger
 * in git's common directory or over NATS JetStream. Declared here so that coordination knows no
 * transport.
 */
import type { ClaimEvent, StoredClaim } from './claims.js';
import type { MessageEvent } from './messages.js';

/**
 * `granted`: the ledger took it; `conflict`: another checkout appended first (read again, decide
 * again); `local-only`: the ledger is out of reach, so the claim is granted here alone for now.
 */
export type AppendOutcome = 'granted' | 'conflict' | 'local-only';

export interface SharedPort {
  /** Applies everything the ledger holds that this board has not seen yet. */
  catchUp(): Promise<void>;
  /** Appends a claim of this checkout, only if the ledger has not moved since `catchUp`. */
  appendClaim(claim: StoredClaim): Promise<AppendOutcome>;
  /** Publishes any other event of this checkout (a renewal, a release, a message); queued while out of reach. */
  publish(event: ClaimEvent | MessageEvent): void;
}
