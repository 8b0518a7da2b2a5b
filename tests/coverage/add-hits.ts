/**
 * Adds one file's hit counts onto another description of the same file.
 *
 * vitest describes src/*.ts from Vite's transform of it; the spawned executable runs the bundle of it.
 * Both are mapped back to the TypeScript source, but the two compilers emit slightly different
 * code, so the same statement may end at another column, and an arrow function may start one
 * character apart. Istanbul's own merge keys on the whole range and would count such an item
 * twice (once covered, once not). Here vitest's description stays the one reported, and each
 * item of the other is matched to it by the most exact key that finds a partner: the same start,
 * then the same line. An item with no partner is counted and returned, never silently dropped.
 */
import type { BranchMapping, FileCoverageData, FunctionMapping, Position, Range } from './istanbul.js';

type KeyOf<T> = (item: T) => string;

const at = (position: Position): string => `${position.line}:${position.column ?? '-'}`;

const STATEMENT_KEYS: ReadonlyArray<KeyOf<Range>> = [(s) => at(s.start), (s) => String(s.start.line)];
const FUNCTION_KEYS: ReadonlyArray<KeyOf<FunctionMapping>> = [
  (f) => at(f.loc.start),
  (f) => at(f.decl.start),
  (f) => String(f.loc.start.line),
];
const BRANCH_KEYS: ReadonlyArray<KeyOf<BranchMapping>> = [
  (b) => `${b.type} ${b.locations.map((l) => at(l.start)).join(' ')}`,
  (b) => `${b.type} ${at(b.loc.start)} ${b.locations.length}`,
  (b) => `${b.type} ${b.loc.start.line} ${b.locations.length}`,
];

/** Pairs each id of `from` with an id of `onto`, key by key; returns the pairs and the unpaired. */
function pair<T>(
  onto: Record<string, T>,
  from: Record<string, T>,
  keys: ReadonlyArray<KeyOf<T>>,
): { pairs: Array<[string, string]>; unpaired: string[] } {
  const taken = new Set<string>();
  const pairs: Array<[string, string]> = [];
  let left = Object.keys(from);
  for (const key of keys) {
    const free = new Map<string, string[]>();
    for (const [id, item] of Object.entries(onto)) {
      if (taken.has(id)) continue;
      const k = key(item);
      const ids = free.get(k);
      if (ids) ids.push(id);
      else free.set(k, [id]);
    }
    const still: string[] = [];
    for (const id of left) {
      const partner = free.get(key(from[id] as T))?.shift();
      if (partner === undefined) still.push(id);
      else {
        taken.add(partner);
        pairs.push([id, partner]);
      }
    }
    left = still;
  }
  return { pairs, unpaired: left };
}

/** Adds `extra`'s counts onto `target` (same source file); returns how many items found no partner. */
export function addHits(target: FileCoverageData, extra: FileCoverageData): number {
  const statements = pair(target.statementMap, extra.statementMap, STATEMENT_KEYS);
  for (const [from, onto] of statements.pairs) target.s[onto] = (target.s[onto] ?? 0) + (extra.s[from] ?? 0);

  const functions = pair(target.fnMap, extra.fnMap, FUNCTION_KEYS);
  for (const [from, onto] of functions.pairs) target.f[onto] = (target.f[onto] ?? 0) + (extra.f[from] ?? 0);

  const branches = pair(target.branchMap, extra.branchMap, BRANCH_KEYS);
  // Every branch key fixes the number of arms, so paired branches have as many counts.
  for (const [from, onto] of branches.pairs) {
    const add = extra.b[from] ?? [];
    target.b[onto] = (target.b[onto] ?? []).map((hits, i) => hits + (add[i] ?? 0));
  }
  return statements.unpaired.length + functions.unpaired.length + branches.unpaired.length;
}
