/**
 * The claim board. Covers:
 * - a granted claim is normalised (relative, sorted, deduplicated) and journalled;
 * - an exclusive overlap with a live peer is refused with `conflict`, naming the peer, its intent,
 *   the claim and the paths; `proceed` grants it with the warning; an exclusive claim over a
 *   shared one is refused too; shared over shared only warns; one's own claims never overlap;
 * - a stale claim (its peer gone) warns and never refuses;
 * - renew extends, release ends, both refuse another peer's claim by name and an unknown id;
 * - release_stale ends a stale claim and refuses a live one naming its peer;
 * - a leaving peer's claims end; expired claims are gone on the next read and journalled;
 * - check answers the claims covering each path (globs, directories): each path with claim ids,
 *   each claim once;
 * - restore puts back unexpired claims, replays renewals and releases, and new ids carry on.
 */
import { describe, expect, it } from 'vitest';
import { ClaimBoard, type ClaimEvent } from '../../../src/coordination/claims.js';
import { CapabilityError } from '../../../src/platform/errors.js';

const ROOT = '/work/checkout';
const client = (name: string) => ({ name, version: '1' });

function board(live: Set<string> = new Set(['p1', 'p2', 'p3'])) {
  let now = Date.parse('2026-11-30T12:00:00Z');
  const events: ClaimEvent[] = [];
  const claims = new ClaimBoard({ root: ROOT, isLive: (peer) => live.has(peer), record: (e) => events.push(e), now: () => now });
  return { claims, events, live, advance: (ms: number) => (now += ms) };
}

const request = (paths: string[], options: { exclusive?: boolean; proceed?: boolean; ttl?: number; intent?: string } = {}) => ({
  paths,
  intent: options.intent ?? 'work',
  exclusive: options.exclusive ?? true,
  ttl_seconds: options.ttl ?? 3600,
  proceed: options.proceed ?? false,
});

function refusal(run: () => unknown): CapabilityError {
  try {
    run();
  } catch (error) {
    if (error instanceof CapabilityError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('ClaimBoard', () => {
  it('grants a claim with its paths normalised and journals it', () => {
    const { claims, events } = board();
    const { claim, warnings } = claims.claim('p1', client('a'), request(['./src/b.ts', `${ROOT}/src/a/`, 'src/b.ts'], { intent: '  split the parser ' }));
    expect(claim).toMatchObject({ id: 'c1', peer: 'p1', live: true, paths: ['src/a', 'src/b.ts'], exclusive: true, intent: 'split the parser' });
    expect(Date.parse(claim.expires_at) - Date.parse(claim.created_at)).toBe(3_600_000);
    expect(warnings).toEqual([]);
    expect(events).toEqual([{ event: 'claim', claim: expect.objectContaining({ id: 'c1', paths: ['src/a', 'src/b.ts'] }) }]);
  });

  it('refuses a path outside the checkout', () => {
    const { claims } = board();
    for (const path of ['../x.ts', '/etc/passwd', 'src/../../x']) {
      const error = refusal(() => claims.claim('p1', client('a'), request([path])));
      expect(error.code).toBe('refused');
      expect(error.message).toContain('outside the checkout');
    }
  });

  it('refuses an overlap with another live peer\'s exclusive claim, naming the peer, its intent and the paths, unless it proceeds', () => {
    const { claims } = board();
    claims.claim('p1', client('client-a'), request(['src/a/**'], { intent: 'refactor the parser' }));
    const error = refusal(() => claims.claim('p2', client('client-b'), request(['src/a/x.ts'], { exclusive: false })));
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('p1 ("client-a")');
    expect(error.message).toContain('"refactor the parser"');
    expect(error.message).toContain('claim c1');
    expect(error.message).toContain('src/a/x.ts');
    expect(error.message).toContain('proceed: true');
    const granted = claims.claim('p2', client('client-b'), request(['src/a/x.ts'], { proceed: true }));
    expect(granted.claim.id).toBe('c2');
    expect(granted.warnings).toEqual([
      { claim: 'c1', peer: 'p1', client: client('client-a'), intent: 'refactor the parser', exclusive: true, live: true, paths: [{ yours: 'src/a/x.ts', theirs: 'src/a/**' }] },
    ]);
  });

  it('refuses an exclusive claim over a shared one, and only warns for shared over shared', () => {
    const { claims } = board();
    claims.claim('p1', client('a'), request(['docs'], { exclusive: false }));
    const error = refusal(() => claims.claim('p2', client('b'), request(['docs/guide.md'])));
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('a shared claim would only warn');
    const shared = claims.claim('p2', client('b'), request(['docs/guide.md'], { exclusive: false }));
    expect(shared.warnings.map((w) => w.claim)).toEqual(['c1']);
  });

  it('never sets a peer against its own claims', () => {
    const { claims } = board();
    claims.claim('p1', client('a'), request(['src']));
    expect(claims.claim('p1', client('a'), request(['src/x.ts'])).warnings).toEqual([]);
  });

  it('warns about a stale claim and never refuses over it', () => {
    const { claims, live } = board();
    claims.claim('p1', client('a'), request(['src']));
    live.delete('p1');
    const granted = claims.claim('p2', client('b'), request(['src/x.ts']));
    expect(granted.warnings).toEqual([expect.objectContaining({ claim: 'c1', live: false })]);
    expect(claims.list().find((c) => c.id === 'c1')?.live).toBe(false);
  });

  it('renews and releases one\'s own claims, and refuses another peer\'s or an unknown id', () => {
    const { claims, events, advance } = board();
    claims.claim('p1', client('a'), request(['a'], { ttl: 60 }));
    claims.claim('p1', client('a'), request(['b'], { ttl: 60 }));
    claims.claim('p2', client('b'), request(['c'], { ttl: 60 }));
    advance(30_000);
    const renewed = claims.renew('p1', undefined, 600);
    expect(renewed.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(Date.parse(renewed[0]?.expires_at ?? '')).toBe(Date.parse('2026-11-30T12:00:30Z') + 600_000);
    expect(refusal(() => claims.renew('p1', ['c3'], 600)).message).toContain('belongs to p2');
    expect(refusal(() => claims.release('p1', ['c9'])).code).toBe('not_found');
    expect(claims.release('p1', ['c1'])).toEqual(['c1']);
    expect(claims.release('p1', undefined)).toEqual(['c2']);
    expect(claims.list().map((c) => c.id)).toEqual(['c3']);
    expect(events.filter((e) => e.event === 'release')).toEqual([
      { event: 'release', ids: ['c1'], reason: 'released', by: 'p1' },
      { event: 'release', ids: ['c2'], reason: 'released', by: 'p1' },
    ]);
  });

  it('releases a stale claim on request and refuses a live one naming its peer', () => {
    const { claims, live } = board();
    claims.claim('p1', client('a'), request(['a']));
    claims.claim('p2', client('b'), request(['b']));
    live.delete('p1');
    const error = refusal(() => claims.releaseStale(['c2'], 'p3'));
    expect(error.code).toBe('refused');
    expect(error.message).toContain('p2 is attached');
    expect(claims.releaseStale(['c1'], 'p3')).toEqual(['c1']);
    expect(claims.list().map((c) => c.id)).toEqual(['c2']);
  });

  it('ends a leaving peer\'s claims, and expired claims on the next read', () => {
    const { claims, events, advance } = board();
    claims.claim('p1', client('a'), request(['a']));
    claims.claim('p2', client('b'), request(['b'], { ttl: 10 }));
    expect(claims.peerLeft('p1')).toEqual(['c1']);
    advance(10_000);
    expect(claims.list()).toEqual([]);
    expect(events.slice(-2)).toEqual([
      { event: 'release', ids: ['c1'], reason: 'left' },
      { event: 'release', ids: ['c2'], reason: 'expired' },
    ]);
  });

  it('answers which claims cover each path checked', () => {
    const { claims } = board();
    claims.claim('p1', client('a'), request(['src/a/**'], { exclusive: false }));
    claims.claim('p2', client('b'), request(['src/**/*.md'], { exclusive: false }));
    claims.claim('p3', client('c'), request(['docs'], { exclusive: false }));
    const answer = claims.check(['src/a/x.ts', 'src/a/README.md', './docs/deep/page.md', 'tests/x.ts', 'src/a/y.ts']);
    expect(answer.paths).toEqual([
      { path: 'src/a/x.ts', claims: ['c1'] },
      { path: 'src/a/README.md', claims: ['c1', 'c2'] },
      { path: 'docs/deep/page.md', claims: ['c3'] },
      { path: 'tests/x.ts', claims: [] },
      { path: 'src/a/y.ts', claims: ['c1'] },
    ]);
    // Each claim once, however many paths it covers, in claim order.
    expect(answer.claims.map((c) => [c.id, c.peer, c.paths])).toEqual([
      ['c1', 'p1', ['src/a/**']],
      ['c2', 'p2', ['src/**/*.md']],
      ['c3', 'p3', ['docs']],
    ]);
  });

  it('restores unexpired claims, replays renewals and releases, and carries the numbering on', () => {
    const first = board();
    first.claims.claim('p1', client('a'), request(['a'], { ttl: 60 }));
    first.claims.claim('p2', client('b'), request(['b'], { ttl: 60 }));
    first.claims.claim('p3', client('c'), request(['c'], { ttl: 10 }));
    first.claims.renew('p1', ['c1'], 7200);
    first.claims.release('p2', undefined);
    const second = board(new Set(['p1']));
    second.advance(30_000);
    for (const event of first.events) {
      if (event.event === 'claim') second.claims.restore(event.claim);
      else second.claims.replay(event);
    }
    expect(second.claims.list().map((c) => [c.id, c.live])).toEqual([['c1', true]]);
    expect(second.claims.list()[0]?.expires_at).toBe('2026-11-30T14:00:00.000Z');
    expect(second.claims.claim('p1', client('a'), request(['d'])).claim.id).toBe('c4');
  });
});
