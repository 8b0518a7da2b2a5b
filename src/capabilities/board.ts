/**
 * The shared board's capability: which checkouts of the repository share this board (worktrees
 * through git's common directory, or checkouts anywhere through a NATS broker), whether they can
 * be reached, and — read-only — the harness sessions each runs (executor tasks among them). Their
 * peers, claims and messages are in the peer, claim and message capabilities already.
 */
import { z } from 'zod';
import { BoardStatusSchema, NOT_SHARED } from '../board/schemas.js';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';

export const boardCheckouts = capability({
  id: 'board.checkouts',
  kind: 'query',
  title: 'Checkouts sharing the board',
  description:
    'The other checkouts of this repository sharing this board (worktrees on this machine, or clones federated through NATS): their branch and host, whether they are alive, how many peers each has, and their agent sessions read-only. Also whether the others can be reached now (when not, claims granted here are local-only until they can).',
  input: z.object({}).strict(),
  output: BoardStatusSchema,
  exposure: { mcp: { tool: 'majordomus_checkouts' }, http: { method: 'GET', path: '/api/v1/board/checkouts' } },
  stability: 'experimental',
  reads: 'peers',
  handler: (_input, { board }) => board?.status() ?? NOT_SHARED,
});

export const BOARD_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([boardCheckouts]);
