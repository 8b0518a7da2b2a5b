/**
 * The floors of the house (docs/ARCHITECTURE.md), kept by a test:
 * - every folder of src/ has a rank, and no module imports a module of a higher-ranked folder —
 *   static, type-only, re-export or dynamic import alike; a folder not ranked here fails the test;
 * - the registry core imports no domain (it ranks below the capabilities that use it);
 * - the projections (mcp, page, http, generate) import no capability module: they see
 *   capabilities through the registry alone, and only the runtime, the hub, the command line and
 *   the thread entries reach the assembly (src/capabilities/index.ts, context.ts);
 * - the bridge path (src/shared/bridge.ts, election, lease, locate, probe, and src/hub/link.ts)
 *   imports no layer index, registry, zod, YAML or MCP SDK module statically, so a bridge starts fast;
 * - no module outside src/capabilities/ and src/registry/ writes an MCP tool name (`majordomus_…`);
 * - nothing in src/ imports from workers/: what crosses a thread lives in src/threads/;
 * - a thread's entry (workers/*.ts) is wiring of at most 60 lines, and no module of src/ or
 *   workers/ passes 600 lines: a room that big has more than one job.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The floors, bottom first. A module may import its own folder and any folder ranked below it. */
const FLOORS: readonly (readonly string[])[] = [
  ['platform'],
  ['layer', 'peers', 'shared', 'floor', 'coordination', 'board', 'executor', 'harness', 'gateway', 'tasks', 'guard', 'init', 'doctor'],
  ['registry'],
  ['capabilities'],
  ['runtime'],
  ['mcp', 'page', 'threads', 'http', 'generate'],
  ['hub'],
  ['cli'],
  ['workers'],
];

/** Within a floor, the order in which folders may build on each other (earlier below later). */
const RANK = new Map(FLOORS.flat().map((folder, index) => [folder, index] as const));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

interface Edge {
  spec: string;
  typeOnly: boolean;
  dynamic: boolean;
}

/** Every import of a module: `import`, `import type`, `export … from` and `import('…')`. */
function imports(file: string): Edge[] {
  const text = readFileSync(join(root, file), 'utf8');
  const statics = [...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)].map((m) => ({
    spec: m[2] as string,
    typeOnly: m[1] !== undefined,
    dynamic: false,
  }));
  const dynamics = [...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => ({ spec: m[1] as string, typeOnly: false, dynamic: true }));
  return [...statics, ...dynamics];
}

function folderOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'workers' ? 'workers' : (parts[1] as string);
}

function target(file: string, spec: string): string {
  return relative(root, join(root, dirname(file), spec.replace(/\.js$/, '.ts')));
}

const everySource = [...sources('src'), ...sources('workers')];

/** The longest a thread's entry may be: it reads its data, builds its body, serves its contract. */
const MAX_ENTRY_LINES = 60;
/** The longest any module may be. */
const MAX_MODULE_LINES = 600;

/** Lines as `wc -l` counts them (a final newline ends the last line, it does not start another). */
function lineCount(file: string): number {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

describe('layering', () => {
  it('ranks every folder of src/ and workers/', () => {
    const unranked = [...new Set(everySource.map(folderOf))].filter((folder) => !RANK.has(folder));
    expect(unranked).toEqual([]);
  });

  it('points every import down a floor, type imports and dynamic imports included', () => {
    const upward = everySource.flatMap((file) =>
      imports(file)
        .filter((edge) => edge.spec.startsWith('.'))
        .flatMap((edge) => {
          const to = target(file, edge.spec);
          const from = folderOf(file);
          const into = folderOf(to);
          if (from === into) return [];
          const fromRank = RANK.get(from) ?? -1;
          const intoRank = RANK.get(into) ?? Number.POSITIVE_INFINITY;
          return intoRank < fromRank ? [] : [`${file} (${from}) imports ${to} (${into})${edge.typeOnly ? ' [type]' : ''}${edge.dynamic ? ' [dynamic]' : ''}`];
        }),
    );
    expect(upward).toEqual([]);
  });

  it('keeps the registry core free of every domain', () => {
    const offenders = sources('src/registry').flatMap((file) =>
      imports(file)
        .filter((edge) => edge.spec.startsWith('.'))
        .map((edge) => target(file, edge.spec))
        .filter((to) => !to.startsWith('src/registry/') && !to.startsWith('src/platform/'))
        .map((to) => `${file} imports ${to}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps every projection ignorant of the capability modules', () => {
    const projections = ['src/mcp', 'src/page', 'src/http', 'src/generate', 'src/threads'].flatMap(sources);
    const entries = new Set(['src/capabilities/index.ts', 'src/capabilities/context.ts']);
    const assemblers = ['src/runtime', 'src/hub', 'src/cli', 'workers'].flatMap(sources);
    const offenders = [
      ...projections.flatMap((file) =>
        imports(file)
          .map((edge) => target(file, edge.spec))
          .filter((to) => to.startsWith('src/capabilities/'))
          .map((to) => `${file} imports ${to}`),
      ),
      ...assemblers.flatMap((file) =>
        imports(file)
          .map((edge) => target(file, edge.spec))
          .filter((to) => to.startsWith('src/capabilities/') && !entries.has(to))
          .map((to) => `${file} imports ${to}`),
      ),
    ];
    expect(offenders).toEqual([]);
  });

  it('keeps the bridge path free of the index, the registry, zod and the MCP SDK', () => {
    // The JSON-RPC helpers (src/platform/jsonrpc.ts) import nothing and are shared with the bridge.
    const heavy = [/\/layer\/(load|build-index|kinds|manifest|view)\.js$/, /\/threads\//, /\/registry\//, /^zod$/, /^yaml$/, /^@modelcontextprotocol\//, /\/mcp\//, /\/http\//];
    const bridgePath = [...['bridge', 'election', 'lease', 'locate', 'probe'].map((name) => `src/shared/${name}.ts`), 'src/hub/link.ts'];
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const edge of imports(file)) {
        if (edge.typeOnly || edge.dynamic) continue;
        if (heavy.some((pattern) => pattern.test(edge.spec))) offenders.push(`${file} imports ${edge.spec}`);
        if (edge.spec.startsWith('.')) visit(target(file, edge.spec));
      }
    };
    bridgePath.forEach(visit);
    expect(offenders).toEqual([]);
  });

  it('names MCP tools in capability declarations alone: no majordomus_<tool> literal elsewhere in src/ or workers/', () => {
    const offenders = everySource
      .filter((file) => !file.startsWith('src/registry/') && !file.startsWith('src/capabilities/'))
      .flatMap((file) =>
        readFileSync(join(root, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (/majordomus_[a-z]/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });

  it(`keeps each thread entry within ${MAX_ENTRY_LINES} lines and each module of src/ and workers/ within ${MAX_MODULE_LINES}`, () => {
    const entries = sources('workers')
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_ENTRY_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines (an entry is wiring: its body belongs at its floor in src/)`);
    const modules = everySource
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_MODULE_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines (split it along its jobs)`);
    expect([...entries, ...modules]).toEqual([]);
  });

  it('keeps src/ from importing workers/: the thread contract lives in src/threads/', () => {
    const offenders = sources('src').filter((file) => imports(file).some((edge) => target(file, edge.spec).startsWith('workers/')));
    expect(offenders).toEqual([]);
  });
});
