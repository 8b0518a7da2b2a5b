/**
 * The package's internal modules a bench times in-process (the claim board, the snapshot codec,
 * the layer's loader…). The build bundles only the executable and the thread entries, so these are
 * bundled here, from the sources, with the build's own configuration (the same inlining and the
 * same externals), into benches/.internals/ (git-ignored) — one build per bench process, entries
 * sharing their chunks, so two modules that share state share it here too. The folder is two deep,
 * like dist/src/, so a chunk finds the package root as the build's chunks do. They always come
 * from this checkout's sources, also when BENCH_MAIN_JS names another build.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'rolldown';
import config from '../../rolldown.config.mjs';
import { PACKAGE_ROOT } from './common.mjs';

/** Every internal module a bench imports, as its path under src/ without the extension. */
const MODULES = ['coordination/claims', 'harness/process', 'layer/load', 'layer/view', 'platform/priority', 'platform/version', 'runtime/load', 'runtime/runtime', 'threads/snapshot'];
const OUT = join(PACKAGE_ROOT, 'benches/.internals');

let built;

async function bundle() {
  await rm(OUT, { recursive: true, force: true });
  await build({
    ...config,
    input: Object.fromEntries(MODULES.map((name) => [name, join(PACKAGE_ROOT, 'src', `${name}.ts`)])),
    output: { ...config.output, dir: OUT, sourcemap: false, entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js' },
  });
}

/** The file URL of `src/<name>.ts` bundled, for a worker thread to import. */
export async function internalUrl(name) {
  if (!MODULES.includes(name)) throw new Error(`benches/lib/internals.mjs bundles ${MODULES.join(', ')}, not ${name}: add it to MODULES`);
  built ??= bundle();
  await built;
  return pathToFileURL(join(OUT, `${name}.js`)).href;
}

/** The module `src/<name>.ts`, bundled (`internal('coordination/claims')`). */
export async function internal(name) {
  return import(await internalUrl(name));
}
