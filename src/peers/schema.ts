/**
 * What a peer is, as zod schemas: the source of the peer types and of the JSON Schemas the peer
 * capabilities publish. Peer-supplied text is bounded here, once: every other agent reads it.
 */
import { z } from 'zod';

export const LIMITS = {
  clientName: 64,
  clientVersion: 32,
  intent: 500,
  path: 512,
  paths: 100,
} as const;

export const PeerClientSchema = z.object({
  name: z.string().max(LIMITS.clientName),
  version: z.string().max(LIMITS.clientVersion),
});

export const AnnouncementSchema = z.object({
  intent: z.string().max(LIMITS.intent),
  paths: z.array(z.string().max(LIMITS.path)).max(LIMITS.paths),
  at: z.string(),
});

/**
 * Where a peer (or a claim) of another checkout sharing the board lives (docs/SCALE.md): that
 * checkout's short name (what follows the `@` of its peer ids), the branch checked out there and
 * the machine's host name. Absent on this checkout's own peers and claims.
 */
export const CheckoutPlaceSchema = z.object({
  checkout: z.string().max(64),
  branch: z.string().max(256).nullable(),
  host: z.string().max(255),
});

export const PeerSchema = z.object({
  /** `p3` on this checkout; `p3@<checkout>` on another checkout sharing the board. */
  id: z.string(),
  client: PeerClientSchema,
  transport: z.enum(['stdio', 'http']),
  connected_at: z.string(),
  last_seen_seconds_ago: z.number().int(),
  announcement: AnnouncementSchema.optional(),
  where: CheckoutPlaceSchema.optional(),
});

export const OverlapSchema = z.object({ peer: z.string(), path: z.string(), their_path: z.string() });

export type PeerClient = z.infer<typeof PeerClientSchema>;
export type Announcement = z.infer<typeof AnnouncementSchema>;
export type Peer = z.infer<typeof PeerSchema>;
export type CheckoutPlace = z.infer<typeof CheckoutPlaceSchema>;
export type Overlap = z.infer<typeof OverlapSchema>;

/** A client's self-description, as another agent may read it: no control characters, bounded. */
export function cleanClient(name: unknown, version: unknown): PeerClient {
  const clean = (value: unknown, max: number): string =>
    typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim().slice(0, max) : '';
  return { name: clean(name, LIMITS.clientName) || 'unknown', version: clean(version, LIMITS.clientVersion) };
}
