/**
 * What the shared board answers about the checkouts sharing it, as zod schemas: the source of the
 * types and of the JSON Schemas `board.checkouts` publishes. Everything here came from another
 * checkout, so it is bounded here once.
 */
import { z } from 'zod';
import { CheckoutPlaceSchema } from '../peers/schema.js';

/** The most sessions a checkout shows the others (running first, then the most recent). */
export const SHARED_SESSIONS = 20;

/** One harness session of a checkout, read-only: an executor session is an executor task. */
export const CheckoutSessionSchema = z.object({
  session: z.string().max(64),
  profile: z.string().max(128),
  agent: z.string().max(32),
  status: z.string().max(16),
  createdAt: z.string().max(40),
  lastTurnAt: z.string().max(40),
});

export const CheckoutViewSchema = CheckoutPlaceSchema.extend({
  /** Its presence is younger than the presence TTL. */
  live: z.boolean(),
  last_seen_seconds_ago: z.number().int(),
  /** Its attached peers (listed by `peers.list` as `p3@<checkout>`). */
  peers: z.number().int(),
  /** Its harness sessions as it last published them (about every third of the presence TTL). */
  sessions: z.array(CheckoutSessionSchema),
});

export const BoardStatusSchema = z.object({
  /** Whether this checkout shares its board with others of its repository. */
  shared: z.boolean(),
  transport: z.enum(['worktrees', 'federation']).nullable(),
  /** Whether the others can be reached now (false: claims granted now are local-only). */
  reachable: z.boolean().nullable(),
  /** This checkout's place; null when nothing is shared. */
  you: CheckoutPlaceSchema.nullable(),
  /** The other checkouts sharing the board, live ones first. */
  checkouts: z.array(CheckoutViewSchema),
});

export type CheckoutSession = z.infer<typeof CheckoutSessionSchema>;
export type CheckoutView = z.infer<typeof CheckoutViewSchema>;
export type BoardStatus = z.infer<typeof BoardStatusSchema>;

/** What the board capability reads. */
export interface BoardAccess {
  status(): BoardStatus;
}

/** The answer of a checkout that shares nothing. */
export const NOT_SHARED: BoardStatus = Object.freeze({ shared: false, transport: null, reachable: null, you: null, checkouts: [] }) as BoardStatus;
