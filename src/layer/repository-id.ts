/** The stable id of a checkout's layer (in `GET /` and `repository.info`; never the path itself). */
import { createHash } from 'node:crypto';

/** The first 16 hex digits of sha256 of the root's real path. */
export function repositoryId(realRoot: string): string {
  return createHash('sha256').update(realRoot).digest('hex').slice(0, 16);
}
