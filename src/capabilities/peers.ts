/**
 * The peer board's capabilities: who is attached, and a peer saying what it is about to change.
 */
import { z } from 'zod';
import { CapabilityError } from '../platform/errors.js';
import { LIMITS, OverlapSchema, PeerSchema } from '../peers/schema.js';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';

const noInput = z.object({}).strict();
const blank = (value: string): boolean => value.trim().length === 0;

export const peersList = capability({
  id: 'peers.list',
  kind: 'query',
  title: 'List peers',
  description:
    'Every MCP session attached to this checkout\'s server, what client it is and what it announced; when the board is shared with other checkouts of the repository (worktrees, or clones federated through NATS), theirs too, as p3@<checkout> with where they are (checkout, branch, host).',
  input: noInput,
  output: z.object({ you: z.string().nullable(), peers: z.array(PeerSchema) }),
  exposure: { mcp: { tool: 'majordomus_peers' }, http: { method: 'GET', path: '/api/v1/peers' } },
  stability: 'stable',
  reads: 'peers',
  guidance: 'See every agent attached to this checkout, and what each announced, with {tool}.',
  handler: (_input, { peers, caller }) => ({ you: caller, peers: peers.list() }),
});

export const peersAnnounce = capability({
  id: 'peers.announce',
  kind: 'command',
  title: 'Announce intent',
  description:
    'Tell the other peers what you are about to do and which paths you will touch; answers with the peers whose announced paths overlap yours.',
  input: z
    .object({
      intent: z.string().max(LIMITS.intent).refine((i) => !blank(i), 'a blank intent is refused'),
      paths: z.array(z.string().min(1).max(LIMITS.path)).max(LIMITS.paths).default([]),
    })
    .strict(),
  output: z.object({ peer: PeerSchema, overlaps: z.array(OverlapSchema) }),
  exposure: { mcp: { tool: 'majordomus_announce' }, http: { method: 'POST', path: '/api/v1/peers/announce' } },
  stability: 'stable',
  reads: 'peers',
  guidance: 'Say what you are working on with {tool} {intent}: every peer sees it in the peer list and in its instructions.',
  handler: ({ intent, paths }, { peers, caller }) => {
    if (caller === null) {
      throw new CapabilityError('refused', 'announcing needs an MCP session: only a peer can announce');
    }
    return peers.announce(caller, intent, paths);
  },
});

export const PEER_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([peersList, peersAnnounce]);
