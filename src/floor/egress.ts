/**
 * The one decision for a file whose content is about to go to a model — a prompt the harness
 * reads from `file` for any agent, a file an executor tool opens: it must be inside the checkout
 * as written and through links, a regular file (a FIFO or a device is refused without being
 * opened, so nothing waits on it), within its bound, and not protected by the floor, asked about
 * the path as written and as it really is.
 */
import { CapabilityError } from '../platform/errors.js';
import { ConfineError, readRegular, realInside, resolveInside } from '../platform/confine.js';
import { floorReason, type Floor } from './rules.js';

export interface ModelBoundFile {
  text: string;
  /** The real path, relative to the root. */
  relative: string;
}

/**
 * Reads `input` (relative to `root`, a real path) as UTF-8 for a model, or refuses with
 * `outside_checkout`, `protected_path`, `not_regular_file` or `refused`; `what` names the input
 * in messages ("file").
 */
export async function readForModel(root: string, floor: Floor, input: string, limit: number, what = 'file'): Promise<ModelBoundFile> {
  const named = `${what} "${input}"`;
  let real: { absolute: string; relative: string };
  try {
    const written = resolveInside(root, input);
    refuseProtected(floor, written.relative, named);
    real = await realInside(root, written.absolute, input);
  } catch (error) {
    if (!(error instanceof ConfineError)) throw error;
    if (error.reason === 'absolute') throw new CapabilityError('outside_checkout', `${named} must be relative to the checkout's root`);
    if (error.reason === 'unreadable') throw new CapabilityError('refused', `${named} ${error.detail}`);
    throw new CapabilityError('outside_checkout', `${named} ${error.detail}; give a path inside it`);
  }
  refuseProtected(floor, real.relative, named);
  const read = await readRegular(real.absolute, limit, { parentsReal: true });
  if (read.ok) return { text: read.bytes.toString('utf8'), relative: real.relative };
  switch (read.reason) {
    case 'missing':
      throw new CapabilityError('refused', `${named} does not exist in the checkout`);
    case 'not_regular':
      throw new CapabilityError('not_regular_file', `${named} ${read.detail}; it was not opened`);
    case 'too_large':
      throw new CapabilityError('refused', `${named} ${read.detail}`);
    case 'symlink':
      throw new CapabilityError('outside_checkout', `${named} ${read.detail}`);
    case 'unreadable':
      throw new CapabilityError('refused', `${named} ${read.detail}`);
  }
}

function refuseProtected(floor: Floor, relative: string, named: string): void {
  const match = floor.match(relative);
  if (match) throw new CapabilityError('protected_path', `${named} is ${floorReason(match)}; it is not given to an agent`);
}
