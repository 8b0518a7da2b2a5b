/**
 * Claims and messages as zod schemas: the source of their types and of the JSON Schemas the
 * coordination capabilities publish. What a peer writes here is read by other agents, so every
 * text is bounded once, here.
 */
import { z } from 'zod';
import { CheckoutPlaceSchema, PeerClientSchema } from '../peers/schema.js';

export const COORDINATION_LIMITS = {
  /** Paths or globs in one claim. */
  claimPaths: 100,
  path: 512,
  intent: 500,
  ttlSeconds: { min: 10, max: 86_400, default: 3_600 },
  /** Paths asked about in one check. */
  checkPaths: 100,
  recipients: 50,
  body: 8_000,
  subject: 200,
  thread: 64,
  ids: 500,
  searchQuery: 200,
} as const;

/** The person at the page or the REST API: a sender and a recipient without an MCP session. */
export const OVERSEER = 'overseer';
/** The recipient that stands for every attached peer but the sender. */
export const EVERYONE = 'all';

const L = COORDINATION_LIMITS;

export const ClaimSchema = z.object({
  id: z.string(),
  peer: z.string(),
  client: PeerClientSchema,
  /** Its peer is attached now; a claim restored after a takeover waits for its peer to re-attach. */
  live: z.boolean(),
  paths: z.array(z.string()),
  exclusive: z.boolean(),
  intent: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  /** The checkout it was granted on, when the board is shared between checkouts (docs/SCALE.md). */
  where: CheckoutPlaceSchema.optional(),
  /** Granted while the shared board was out of reach: not yet in the ledger, reconciled when it returns. */
  local_only: z.boolean().optional(),
});

export const PathPairSchema = z.object({ yours: z.string(), theirs: z.string() });

export const OverlapSchema = z.object({
  claim: z.string(),
  peer: z.string(),
  client: PeerClientSchema,
  intent: z.string(),
  exclusive: z.boolean(),
  live: z.boolean(),
  paths: z.array(PathPairSchema),
});

export const MessageSchema = z.object({
  id: z.string(),
  thread: z.string(),
  from: z.string(),
  from_client: PeerClientSchema.optional(),
  to: z.array(z.string()),
  subject: z.string().optional(),
  body: z.string(),
  at: z.string(),
  /** In an inbox only: whether its reader acknowledged it. */
  acknowledged: z.boolean().optional(),
});

const ttl = z.number().int().min(L.ttlSeconds.min).max(L.ttlSeconds.max);
const ids = (max: number) => z.array(z.string().min(1).max(32)).max(max);
const blank = (value: string): boolean => value.trim().length === 0;

export const ClaimInputSchema = z
  .object({
    paths: z.array(z.string().min(1).max(L.path)).min(1, 'name at least one path or glob').max(L.claimPaths),
    intent: z.string().max(L.intent).refine((i) => !blank(i), 'a blank intent is refused: say what you will do'),
    exclusive: z.boolean().default(true),
    ttl_seconds: ttl.default(L.ttlSeconds.default),
    proceed: z.boolean().default(false),
  })
  .strict();

export const RenewInputSchema = z.object({ ids: ids(L.claimPaths).optional(), ttl_seconds: ttl.default(L.ttlSeconds.default) }).strict();
export const ReleaseInputSchema = z.object({ ids: ids(L.claimPaths).optional() }).strict();
export const ReleaseStaleInputSchema = z.object({ ids: ids(L.claimPaths).min(1) }).strict();
export const ListClaimsInputSchema = z
  .object({
    as: z.string().max(16).regex(/^p[1-9]\d{0,8}$/, 'a peer id such as p3').optional(),
    pids: z.array(z.number().int().min(1)).max(64).optional(),
  })
  .strict();
/** How a check answers: `compact`, each claim once; `paths`, each path with its claims written out. */
export const CHECK_VIEWS = ['compact', 'paths'] as const;
export type CheckView = (typeof CHECK_VIEWS)[number];

export const CheckInputSchema = z
  .object({
    paths: z.array(z.string().min(1).max(L.path)).min(1, 'name at least one path').max(L.checkPaths),
    view: z
      .enum(CHECK_VIEWS)
      .default('compact')
      .describe('compact (the default): every claim covering an asked path once, in `claims`, and each path naming its claims\' ids; paths: each path with its claims written out in `holders` (a claim repeats for every path it covers), for a person reading the answer'),
  })
  .strict();

/** A checked path (normalised as claims are) and the ids of the claims covering it, in claim order. */
export const CheckedPathSchema = z.object({
  path: z.string(),
  claims: z.array(z.string()),
  /** The `paths` view only: those claims written out. */
  holders: z.array(ClaimSchema).optional(),
});

export const CheckAnswerSchema = z.object({
  you: z.string().nullable(),
  /** The `compact` view: every claim covering an asked path, once, in claim order. */
  claims: z.array(ClaimSchema).optional(),
  paths: z.array(CheckedPathSchema),
});

/** A thread id; `@` names the checkout of a thread another checkout started (`m7@feature-1a2b`). */
const THREAD = /^[A-Za-z0-9._@-]+$/;

export const SendInputSchema = z
  .object({
    to: z.array(z.string().min(1).max(32)).min(1, `name at least one recipient (a peer id, "${OVERSEER}" or "${EVERYONE}")`).max(L.recipients),
    body: z.string().max(L.body).refine((b) => !blank(b), 'a blank body is refused'),
    subject: z.string().max(L.subject).optional(),
    thread: z.string().min(1).max(L.thread).regex(THREAD, 'a thread id is letters, digits, ".", "_", "-" and "@"').optional(),
  })
  .strict();
export const InboxInputSchema = z.object({ unread: z.boolean().default(false), limit: z.number().int().min(1).max(500).default(100) }).strict();
export const AckInputSchema = z.object({ ids: ids(L.ids).min(1) }).strict();
export const ThreadInputSchema = z
  .object({ thread: z.string().min(1).max(L.thread), limit: z.number().int().min(1).max(500).default(200) })
  .strict();
export const SearchInputSchema = z
  .object({
    query: z.string().max(L.searchQuery).refine((q) => !blank(q), 'a blank query is refused'),
    limit: z.number().int().min(1).max(100).default(20),
  })
  .strict();

export type Claim = z.infer<typeof ClaimSchema>;
export type CheckedPath = z.infer<typeof CheckedPathSchema>;
export type CheckAnswer = z.infer<typeof CheckAnswerSchema>;
export type Overlap = z.infer<typeof OverlapSchema>;
export type PathPair = z.infer<typeof PathPairSchema>;
export type Message = z.infer<typeof MessageSchema>;
