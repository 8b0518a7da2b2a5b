/**
 * addHits puts the spawned executable's counts (the bundle's mapped back to src/) onto vitest's
 * description of the same file (Vite's output mapped to src/):
 * - identical descriptions: every count is summed;
 * - a statement that ends elsewhere, a function whose declaration or body starts elsewhere, a
 *   branch whose whole range starts elsewhere still find their partner;
 * - exact partners are taken before same-line ones;
 * - an item with no partner changes nothing and is counted.
 */
import { describe, expect, it } from 'vitest';
import { addHits } from '../../coverage/add-hits.js';
import type { FileCoverageData, Range } from '../../coverage/istanbul.js';

const range = (line: number, column: number | null, endLine = line, endColumn: number | null = 80): Range => ({
  start: { line, column },
  end: { line: endLine, column: endColumn },
});

function file(parts: Partial<FileCoverageData>): FileCoverageData {
  return { path: '/p/src/a.ts', statementMap: {}, fnMap: {}, branchMap: {}, s: {}, f: {}, b: {}, ...parts };
}

describe('addHits', () => {
  it('sums statements, functions and branches of identical descriptions', () => {
    const shape = {
      statementMap: { 0: range(1, 0), 1: range(2, 2) },
      fnMap: { 0: { name: 'f', decl: range(1, 9), loc: range(1, 20, 3, 1), line: 1 } },
      branchMap: { 0: { loc: range(2, 2), type: 'if', locations: [range(2, 2), range(2, 2)], line: 2 } },
    };
    const target = file({ ...structuredClone(shape), s: { 0: 1, 1: 0 }, f: { 0: 1 }, b: { 0: [0, 1] } });
    const extra = file({ ...structuredClone(shape), s: { 0: 2, 1: 3 }, f: { 0: 4 }, b: { 0: [5, 0] } });

    expect(addHits(target, extra)).toBe(0);
    expect(target.s).toEqual({ 0: 3, 1: 3 });
    expect(target.f).toEqual({ 0: 5 });
    expect(target.b).toEqual({ 0: [5, 1] });
  });

  it('pairs items that start alike but end or begin their body elsewhere', () => {
    const target = file({
      statementMap: { 0: range(4, 2, 4, null) },
      fnMap: {
        0: { name: 'named', decl: range(6, 16), loc: range(6, 70, 9, null), line: 6 },
        1: { name: '(anonymous_1)', decl: range(10, 27), loc: range(10, 39), line: 10 },
      },
      branchMap: {
        0: { loc: range(12, 2), type: 'binary-expr', locations: [range(12, 7), range(12, 28)], line: 12 },
      },
      s: { 0: 0 },
      f: { 0: 0, 1: 0 },
      b: { 0: [0, 0] },
    });
    const extra = file({
      statementMap: { 0: range(4, 2, 4, 93) },
      fnMap: {
        0: { name: 'named', decl: range(6, 16), loc: range(6, 56, 9, 1), line: 6 },
        1: { name: '(anonymous_7)', decl: range(10, 31), loc: range(10, 39), line: 10 },
      },
      branchMap: {
        0: { loc: range(12, 6), type: 'binary-expr', locations: [range(12, 7), range(12, 28)], line: 12 },
      },
      s: { 0: 2 },
      f: { 0: 1, 1: 3 },
      b: { 0: [1, 2] },
    });

    expect(addHits(target, extra)).toBe(0);
    expect(target.s).toEqual({ 0: 2 });
    expect(target.f).toEqual({ 0: 1, 1: 3 });
    expect(target.b).toEqual({ 0: [1, 2] });
  });

  it('gives exact partners first, then pairs the rest on the same line', () => {
    const target = file({ statementMap: { 0: range(3, 2), 1: range(3, 10) }, s: { 0: 0, 1: 0 } });
    // The extra statement at 3:4 comes first and has no exact partner; it must not take 3:2 from 3:2.
    const extra = file({ statementMap: { 0: range(3, 4), 1: range(3, 2) }, s: { 0: 7, 1: 5 } });

    expect(addHits(target, extra)).toBe(0);
    expect(target.s).toEqual({ 0: 5, 1: 7 });
  });

  it('leaves the target as it was for an item with no partner, and counts it', () => {
    const target = file({
      statementMap: { 0: range(1, 0) },
      branchMap: { 0: { loc: range(1, 0), type: 'if', locations: [range(1, 0), range(1, 0)], line: 1 } },
      s: { 0: 1 },
      b: { 0: [1, 0] },
    });
    const extra = file({
      statementMap: { 0: range(1, 0), 1: range(8, 0) },
      fnMap: { 0: { name: 'g', decl: range(9, 9), loc: range(9, 12), line: 9 } },
      branchMap: {
        0: { loc: range(1, 0), type: 'cond-expr', locations: [range(1, 4), range(1, 8)], line: 1 },
      },
      s: { 0: 1, 1: 4 },
      f: { 0: 2 },
      b: { 0: [3, 3] },
    });

    expect(addHits(target, extra)).toBe(3);
    expect(target.s).toEqual({ 0: 2 });
    expect(target.f).toEqual({});
    expect(target.b).toEqual({ 0: [1, 0] });
  });
});
