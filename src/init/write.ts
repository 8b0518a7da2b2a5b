/**
 * Writes a plan's changed files. Each is written to a temporary file beside it and renamed over
 * the old one, so a client reading its configuration never sees half of it.
 */
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { confineTarget, type InitPlan } from './plan.js';

async function modeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.majordomus-init-${process.pid}.tmp`;
  try {
    // An existing file keeps its permissions.
    const mode = await modeOf(path);
    await writeFile(temp, text, mode === undefined ? {} : { mode });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Writes every created or updated file of `plan`. Every target is confined again first, all of
 * them before the first write, so a link that appeared since the plan was made refuses the whole
 * plan rather than half of it.
 */
export async function writePlan(plan: InitPlan): Promise<void> {
  const changed = plan.files.filter((file) => file.state !== 'unchanged');
  for (const file of changed) await confineTarget(plan.root, file.path);
  for (const file of changed) await writeAtomically(join(plan.root, file.path), file.after);
}
