/**
 * The root: the nearest ancestor (inclusive) of the start directory holding `.ai/manifest.yaml`.
 * Anything at that path other than "absent" stops the search — a manifest that exists but cannot
 * be read is a broken manifest, reported by the reader, never a reason to look further up.
 */
// Synchronous stats: a few in a row at every start (a bridge's included), each an asynchronous
// round trip through the thread pool otherwise.
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MajordomusError, errorMessage } from '../platform/errors.js';
import { MANIFEST_PATH } from './identity.js';

/** Where the layer was found. */
export interface RootLocation {
  /** Absolute path of the directory holding `.ai/manifest.yaml`. */
  root: string;
  /** Absolute path of the manifest. */
  manifestPath: string;
}

function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Finds the root from `start`; no root → MAJ_NO_ROOT naming every directory looked at. */
export async function findRoot(start: string): Promise<RootLocation> {
  const first = resolve(start);
  try {
    const info = statSync(first);
    if (!info.isDirectory()) throw new MajordomusError('MAJ_NO_ROOT', `cannot look for ${MANIFEST_PATH} from ${first}: not a directory`);
  } catch (error) {
    if (error instanceof MajordomusError) throw error;
    throw new MajordomusError('MAJ_NO_ROOT', `cannot look for ${MANIFEST_PATH} from ${first}: ${errorMessage(error)}`, { cause: error });
  }

  const looked: string[] = [];
  let directory = first;
  for (;;) {
    looked.push(directory);
    const manifestPath = join(directory, MANIFEST_PATH);
    try {
      statSync(manifestPath);
      return { root: directory, manifestPath };
    } catch (error) {
      // Present but unusable (EACCES, ELOOP, …): this is the root and its manifest is broken.
      if (!isAbsent(error)) return { root: directory, manifestPath };
    }
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  throw new MajordomusError(
    'MAJ_NO_ROOT',
    `no ${MANIFEST_PATH} found; looked in ${looked.length} ${looked.length === 1 ? 'directory' : 'directories'}: ${looked.join(', ')}`,
  );
}
