/**
 * The coordination capabilities: claims (claim, renew, release, release a stale one, list, check)
 * and messages (send, inbox, acknowledge, thread, search). They read `peers`, so they run where
 * the peer board lives, and every HTTP call needs the token. Their guidance is how a new agent
 * learns, in its `initialize` instructions, to claim, check and message.
 */
import { z } from 'zod';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';
import {
  AckInputSchema,
  CheckAnswerSchema,
  CheckInputSchema,
  ClaimInputSchema,
  ClaimSchema,
  EVERYONE,
  InboxInputSchema,
  ListClaimsInputSchema,
  MessageSchema,
  OVERSEER,
  OverlapSchema,
  ReleaseInputSchema,
  ReleaseStaleInputSchema,
  RenewInputSchema,
  SearchInputSchema,
  SendInputSchema,
  ThreadInputSchema,
} from '../coordination/schemas.js';

const claimIds = z.object({ released: z.array(z.string()) });

export const claimsClaim = capability({
  id: 'claims.claim',
  kind: 'command',
  title: 'Claim paths',
  description:
    'Reserve paths or globs (relative to the checkout) for a while, exclusively (the default) or shared, saying what you will do. A claim that overlaps another live peer\'s claim where either is exclusive is refused with the peer, its intent and the paths (code conflict) unless proceed is true; other overlaps are granted with warnings, and the other peer is told live. Claims end when you leave or their TTL passes; the git guard refuses commits that touch another peer\'s exclusive claim.',
  input: ClaimInputSchema,
  output: z.object({ claim: ClaimSchema, warnings: z.array(OverlapSchema) }),
  exposure: { mcp: { tool: 'majordomus_claim' }, http: { method: 'POST', path: '/api/v1/claims' } },
  refusals: ['conflict'],
  stability: 'experimental',
  reads: 'peers',
  guidance:
    'Before you edit files, claim them with {tool} {paths, intent} (exclusive by default, for ttl_seconds; globs allowed): an overlap with another peer\'s claim answers who holds it and why.',
  handler: (input, { coordination, caller }) => coordination.grant(caller, input),
});

export const claimsRenew = capability({
  id: 'claims.renew',
  kind: 'command',
  title: 'Renew claims',
  description: 'Extend your claims (all of them, or those named) to ttl_seconds from now.',
  input: RenewInputSchema,
  output: z.object({ claims: z.array(ClaimSchema) }),
  exposure: { mcp: { tool: 'majordomus_renew_claims' }, http: { method: 'POST', path: '/api/v1/claims/renew' } },
  stability: 'experimental',
  reads: 'peers',
  handler: ({ ids, ttl_seconds }, { coordination, caller }) => ({ claims: coordination.renew(caller, ids, ttl_seconds) }),
});

export const claimsRelease = capability({
  id: 'claims.release',
  kind: 'command',
  title: 'Release claims',
  description: 'End your claims (all of them, or those named) once your edit is done.',
  input: ReleaseInputSchema,
  output: claimIds,
  exposure: { mcp: { tool: 'majordomus_release_claims' }, http: { method: 'POST', path: '/api/v1/claims/release' } },
  stability: 'experimental',
  reads: 'peers',
  guidance: 'Release your claims with {tool} when your edit is done.',
  handler: ({ ids }, { coordination, caller }) => ({ released: coordination.release(caller, ids) }),
});

export const claimsReleaseStale = capability({
  id: 'claims.release_stale',
  kind: 'command',
  title: 'Release stale claims',
  description: 'End claims whose peer is no longer attached (live: false, e.g. after a takeover its agent never came back). A live peer\'s claim is refused.',
  input: ReleaseStaleInputSchema,
  output: claimIds,
  exposure: { mcp: { tool: 'majordomus_release_stale_claims' }, http: { method: 'POST', path: '/api/v1/claims/release-stale' } },
  stability: 'experimental',
  reads: 'peers',
  handler: ({ ids }, { coordination, caller }) => ({ released: coordination.releaseStale(caller, ids) }),
});

export const claimsList = capability({
  id: 'claims.list',
  kind: 'query',
  title: 'List claims',
  description:
    `Every claim in this checkout with its peer, intent, exclusivity and expiry. \`you\` is the asking peer; a caller without an MCP session (the git guard) may name itself with as (a peer id) or pids (its process ancestry, nearest first).`,
  input: ListClaimsInputSchema,
  output: z.object({ you: z.string().nullable(), claims: z.array(ClaimSchema) }),
  exposure: { mcp: { tool: 'majordomus_claims' }, http: { method: 'GET', path: '/api/v1/claims' } },
  stability: 'experimental',
  reads: 'peers',
  handler: ({ as, pids }, { coordination, caller }) => ({ you: caller ?? coordination.identify(as, pids), claims: coordination.claims() }),
});

export const claimsCheck = capability({
  id: 'claims.check',
  kind: 'query',
  title: 'Check paths',
  description:
    'Which claims cover each path: ask before you edit a file you did not claim. The answer names each path with the ids of the claims covering it, and lists those claims once in `claims`; view: "paths" writes each path\'s claims out beside it instead.',
  input: CheckInputSchema,
  output: CheckAnswerSchema,
  exposure: { mcp: { tool: 'majordomus_check_paths' }, http: { method: 'GET', path: '/api/v1/claims/check' } },
  stability: 'experimental',
  reads: 'peers',
  guidance: 'Ask who holds paths with {tool} {paths} before you touch files you did not claim.',
  handler: ({ paths, view }, { coordination, caller }) => ({ you: caller, ...coordination.check(paths, view) }),
});

export const messagesSend = capability({
  id: 'messages.send',
  kind: 'command',
  title: 'Send a message',
  description: `Send a message to peers (ids from the peer list), to "${EVERYONE}" (every attached peer but you) or to "${OVERSEER}" (the person), optionally in a thread (a thread is named by its first message's id, or by a name you choose). Recipients are told live and find it in their inbox. Each sender has a rate (by default 20 a second after a burst of 100): past it a message is refused with rate_limited, saying in how many ms to retry.`,
  input: SendInputSchema,
  output: z.object({ message: MessageSchema, delivered: z.array(z.string()) }),
  exposure: { mcp: { tool: 'majordomus_send_message' }, http: { method: 'POST', path: '/api/v1/messages' } },
  refusals: ['rate_limited'],
  stability: 'experimental',
  reads: 'peers',
  guidance: `Talk to other agents with {tool} {to: [peer ids] or ["${EVERYONE}"], body, thread?}: they are told at once.`,
  handler: (input, { coordination, caller }) => coordination.send(caller, input),
});

export const messagesInbox = capability({
  id: 'messages.inbox',
  kind: 'query',
  title: 'Inbox',
  description: 'The messages sent to you (directly or to all) while this server\'s lineage lives, oldest first, each marked acknowledged or not.',
  input: InboxInputSchema,
  output: z.object({ you: z.string(), unread: z.number().int(), messages: z.array(MessageSchema) }),
  exposure: {
    mcp: { tool: 'majordomus_inbox', resource: 'majordomus://inbox' },
    http: { method: 'GET', path: '/api/v1/messages/inbox' },
  },
  stability: 'experimental',
  reads: 'peers',
  guidance: 'Read messages sent to you with {tool}.',
  handler: (input, { coordination, caller }) => coordination.inbox(caller, input),
});

export const messagesAck = capability({
  id: 'messages.ack',
  kind: 'command',
  title: 'Acknowledge messages',
  description: 'Mark messages of your inbox as handled.',
  input: AckInputSchema,
  output: z.object({ acknowledged: z.array(z.string()) }),
  exposure: { mcp: { tool: 'majordomus_ack_messages' }, http: { method: 'POST', path: '/api/v1/messages/ack' } },
  stability: 'experimental',
  reads: 'peers',
  handler: ({ ids }, { coordination, caller }) => ({ acknowledged: coordination.ack(caller, ids) }),
});

export const messagesThread = capability({
  id: 'messages.thread',
  kind: 'query',
  title: 'Read a thread',
  description: 'A thread\'s messages, oldest first, whoever they were sent to: how an agent that joins later reads what was said.',
  input: ThreadInputSchema,
  output: z.object({ thread: z.string(), messages: z.array(MessageSchema) }),
  exposure: { mcp: { tool: 'majordomus_thread' }, http: { method: 'GET', path: '/api/v1/messages/thread' } },
  stability: 'experimental',
  reads: 'peers',
  handler: ({ thread, limit }, { coordination }) => ({ thread, messages: coordination.thread(thread, limit) }),
});

export const messagesSearch = capability({
  id: 'messages.search',
  kind: 'query',
  title: 'Search messages',
  description: 'Messages whose subject or body holds every word of the query, ignoring case and accents; newest first.',
  input: SearchInputSchema,
  output: z.object({ messages: z.array(MessageSchema) }),
  exposure: { mcp: { tool: 'majordomus_search_messages' }, http: { method: 'GET', path: '/api/v1/messages/search' } },
  stability: 'experimental',
  reads: 'peers',
  handler: async ({ query, limit }, { coordination }, { signal }) => ({ messages: await coordination.search(query, limit, signal) }),
});

export const COORDINATION_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([
  claimsClaim,
  claimsRenew,
  claimsRelease,
  claimsReleaseStale,
  claimsList,
  claimsCheck,
  messagesSend,
  messagesInbox,
  messagesAck,
  messagesThread,
  messagesSearch,
]);
