/**
 * The registry is the centre; the projections only see it through the registry.
 * - no module of src/mcp, src/http, src/cli or workers/ imports the builtin capability module
 *   (except the places that build the registry: src/runtime/load.ts and the pool task);
 * - the bridge path (src/shared/bridge.ts, election, lease, locate, probe, link) imports no
 *   layer index, registry, zod, YAML or MCP SDK module statically, so a bridge starts fast;
 * - no module outside src/registry/ writes an MCP tool name (`majordomus_…`): tools are named in
 *   the registry alone, and every other text (the instructions) takes them from there;
 * - nothing in src/ imports from workers/: what crosses a thread lives in src/threads/.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Static imports only: `import … from '…'` and `export … from '…'`, not `import type`. */
function staticImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1] as string);
}

describe('layering', () => {
  it('keeps every projection ignorant of the builtin capability module', () => {
    // The threads that run handlers: the pool (layer and registry reads) and the harness thread.
    const allowed = new Set(['src/runtime/load.ts', 'workers/pool-task.ts', 'workers/harness-thread.ts']);
    const offenders = [...sources('src/mcp'), ...sources('src/http'), ...sources('src/cli'), ...sources('workers'), ...sources('src/shared')]
      .filter((file) => !allowed.has(file))
      .filter((file) => staticImports(file).some((spec) => spec.endsWith('/builtins.js')));
    expect(offenders).toEqual([]);
  });

  it('keeps the bridge path free of the index, the registry, zod and the MCP SDK', () => {
    // The JSON-RPC helpers (src/mcp/jsonrpc.ts) import nothing and are shared with the bridge.
    const heavy = [/\/layer\/(load|build-index|kinds|manifest|view)\.js$/, /\/threads\//, /\/registry\//, /^zod$/, /^yaml$/, /^@modelcontextprotocol\//, /\/mcp\/(?!jsonrpc\.js$)/, /\/http\//];
    const bridgePath = ['bridge', 'election', 'lease', 'locate', 'probe', 'link'].map((name) => `src/shared/${name}.ts`);
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of staticImports(file)) {
        if (heavy.some((pattern) => pattern.test(spec))) offenders.push(`${file} imports ${spec}`);
        if (spec.startsWith('.')) visit(relative(root, join(root, file, '..', spec.replace(/\.js$/, '.ts'))));
      }
    };
    bridgePath.forEach(visit);
    expect(offenders).toEqual([]);
  });

  it('names MCP tools in capability declarations alone: no majordomus_<tool> literal elsewhere in src/ or workers/', () => {
    // The harness and the task board declare their capabilities beside their state.
    const declarations = new Set(['src/harness/capabilities.ts', 'src/tasks/capabilities.ts', 'src/coordination/capabilities.ts']);
    const offenders = [...sources('src'), ...sources('workers')]
      .filter((file) => !file.startsWith('src/registry/') && !declarations.has(file))
      .flatMap((file) =>
        readFileSync(join(root, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (/majordomus_[a-z]/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps src/ from importing workers/: the thread contract lives in src/threads/', () => {
    const offenders = sources('src').filter((file) => staticImports(file).some((spec) => spec.includes('/workers/')));
    const typeOnly = sources('src').filter((file) => /from '(\.\.\/)+workers\//.test(readFileSync(join(root, file), 'utf8')));
    expect([...offenders, ...typeOnly]).toEqual([]);
  });
});
