// The build (npm run build): the executable and each worker thread's entry, bundled from the
// TypeScript sources with what they import, so a process loads a few files instead of the ~250
// modules per thread tsc's output and the dependencies' own files made it load (the ESM loader's
// work per module was half of a server's start). Type-checking is tsc's (npm run typecheck).
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'rolldown';

/** The package root: every path below is relative to it, wherever the build is started from. */
const root = fileURLToPath(new URL('.', import.meta.url));

/** Entry name (its path under dist/, without .js) → source. */
const input = {
  'src/cli/main': 'src/cli/main.ts',
  // Loaded by path in a child process of its own (doctor's check that the uWS binary loads).
  'src/platform/uws': 'src/platform/uws.ts',
  ...Object.fromEntries(
    readdirSync(`${root}workers`)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => [`workers/${name.slice(0, -3)}`, `workers/${name}`]),
  ),
};

/**
 * Left to Node.js to load from node_modules: a native binary (uWS), packages that start workers or
 * serve files by their own path (piscina, swagger-ui-dist), ws with its optional native helpers,
 * and the NATS clients, loaded only when a board is federated.
 */
const EXTERNAL = [/^node:/, /^@based\/uws/, /^piscina/, /^swagger-ui-dist/, /^ws$/, /^bufferutil/, /^utf-8-validate/, /^@nats-io\//];

export default defineConfig({
  cwd: root,
  input,
  platform: 'node',
  // A package's ES module build before its `main` (jsonc-parser's `main` is a UMD wrapper whose
  // requires a bundler cannot follow).
  resolve: { mainFields: ['module', 'main'] },
  external: EXTERNAL,
  output: {
    dir: `${root}dist`,
    format: 'esm',
    // Maps beside the scripts for the coverage of the processes the tests start
    // (tests/coverage/spawned-coverage.ts reads `<script>.map`), named by no comment: Node loads
    // every map a script names into each thread when NODE_V8_COVERAGE is set and copies it into
    // every coverage file, which made coverage cost a third of the suite's CPU.
    sourcemap: 'hidden',
    sourcemapExcludeSources: true,
    entryFileNames: '[name].js',
    // Two folders deep, like every entry's own module was: the sources' `new URL('../../…',
    // import.meta.url)` (the workers, the package root) resolve the same from a chunk.
    chunkFileNames: 'src/chunks/[name]-[hash].js',
  },
});
