/**
 * The claims and the checked paths of the coordination benchmark, the same for the owner it drives
 * over MCP and for the claim board it fills in-process. Claim k (0 … peers × perPeer − 1; peer
 * k / perPeer) names, by k:
 *   k % 10 == 0   a suffix glob   `src/**\/*.p<k>.ts`            (one pattern)
 *   k odd         a directory glob `src/m<k>/**`                 (one pattern)
 *   otherwise     plain paths      `src/m<k>/f<k>.ts` and its `.test.ts` (two patterns)
 * All shared (`exclusive: false`), so none is refused; a suffix glob meets every directory glob
 * (their static bases nest: `patternsOverlap` is conservative for two globs), so those pairs are
 * granted with warnings and the holder is told, as the contract says.
 *
 * The checked paths cycle through four kinds, so an answer names 0–2 claims per path:
 *   `src/m<odd>/index.ts` (one directory glob) · `src/m<odd>/x.p<10j>.ts` (a directory glob and a
 *   suffix glob) · `src/m<k>/f<k>.ts` (a plain claim) · `src/free/u<n>.ts` (no claim).
 */

/** The paths of claim `k`. */
export function claimPaths(k) {
  if (k % 10 === 0) return [`src/**/*.p${k}.ts`];
  if (k % 2 === 1) return [`src/m${k}/**`];
  return [`src/m${k}/f${k}.ts`, `src/m${k}/f${k}.test.ts`];
}

/** Every claim: `{peer (0-based), k, paths, intent}`, peer by peer. */
export function claimPlan(peers, perPeer) {
  const plan = [];
  for (let peer = 0; peer < peers; peer += 1) {
    for (let j = 0; j < perPeer; j += 1) {
      const k = peer * perPeer + j;
      plan.push({ peer, k, paths: claimPaths(k), intent: `bench: peer ${peer} works on item ${k}` });
    }
  }
  return plan;
}

/** How many patterns the plan holds. */
export function patternCount(plan) {
  return plan.reduce((n, c) => n + c.paths.length, 0);
}

/**
 * `n` checked paths in four claimed directories (the directory globs of claims 1, 3, 5 and 7):
 * what an agent asks before editing files of one area, where one claim covers many of the paths.
 */
export function clusteredPaths(n) {
  return Array.from({ length: n }, (_, i) => `src/m${[1, 3, 5, 7][i % 4]}/part${i}.ts`);
}

/** `n` checked paths (see above); `claims` is the number of claims k ranges over. */
export function checkPaths(n, claims) {
  const paths = [];
  for (let i = 0; i < n; i += 1) {
    const odd = ((i * 37) % claims) | 1;
    const even = ((i * 53) % claims) & ~1 || 2;
    const plainK = even % 10 === 0 ? even + 2 : even;
    switch (i % 4) {
      case 0:
        paths.push(`src/m${odd}/index.ts`);
        break;
      case 1:
        paths.push(`src/m${odd}/x.p${((i * 10) % claims)}.ts`);
        break;
      case 2:
        paths.push(`src/m${plainK % claims}/f${plainK % claims}.ts`);
        break;
      default:
        paths.push(`src/free/u${i}.ts`);
    }
  }
  return paths;
}
