/**
 * One source module and everything it imports as a single script of its own, for a test that runs
 * it as another user. The checkout may live where no other user can enter (a 0700 home, a
 * `mktemp -d` folder), so a process that drops to `nobody` cannot load the checkout's dist/; it can
 * load this file, written world-readable into a folder it can enter. Bundled with the build's
 * bundler (rolldown) into one script, without the build's configuration: the module must need
 * nothing but Node's built-ins.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'rolldown';

/** Bundles `source` (a .ts path) into `<into>/<name>.js` and answers that path. */
export async function bundleModule(source: string, into: string, name: string): Promise<string> {
  const { output } = await build({ input: source, platform: 'node', write: false, output: { format: 'esm', codeSplitting: false } });
  const chunks = output.filter((item) => item.type === 'chunk');
  if (chunks.length !== 1) throw new Error(`${source} bundled into ${chunks.length} scripts, not one`);
  const file = join(into, `${name}.js`);
  await writeFile(file, (chunks[0] as { code: string }).code);
  await chmod(into, 0o755);
  await chmod(file, 0o644);
  return file;
}
