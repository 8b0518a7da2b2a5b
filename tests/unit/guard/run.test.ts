/**
 * The guard's judgement and its words (src/guard/run.ts), without a server (`MAJORDOMUS_GUARD` is
 * read in src/platform/settings.ts: tests/unit/platform/settings.test.ts). Covers:
 * - the claims answer is checked for every field the guard reads;
 * - judging: only other peers' claims count; a live exclusive claim covering a touched path
 *   blocks; shared claims and claims whose peer is not attached are noted, never blocking; claims
 *   that cover nothing touched are ignored; with no `you`, every claim is another's;
 * - the report names the peer, its client's name, its intent (JSON-quoted), the claim id and the covered
 *   paths, says how to go on, differs between refuse and warn and between commit and push, quotes
 *   paths holding control characters, lists at most ten paths per claim, and asks an unrecognised
 *   committer to set MAJORDOMUS_PEER.
 */
import { describe, expect, it } from 'vitest';
import { claimsAnswerOf, judge, report, type ClaimView } from '../../../src/guard/run.js';

function claim(fields: Partial<ClaimView> & Pick<ClaimView, 'id' | 'peer' | 'paths'>): ClaimView {
  return {
    client: { name: 'client-b', version: '1.0.0' },
    live: true,
    exclusive: true,
    intent: 'refactor the parser',
    created_at: '2026-01-01T00:00:00.000Z',
    expires_at: '2026-01-01T01:00:00.000Z',
    ...fields,
  };
}

describe('claimsAnswerOf', () => {
  it('takes a well-formed answer', () => {
    const answer = { you: 'p1', claims: [claim({ id: 'c1', peer: 'p2', paths: ['src/b.ts'] })] };
    expect(claimsAnswerOf(answer)).toEqual(answer);
    expect(claimsAnswerOf({ you: null, claims: [] })).toEqual({ you: null, claims: [] });
  });

  it.each([
    ['not an object', 'claims'],
    ['no claims', { you: null }],
    ['a numeric you', { you: 3, claims: [] }],
    ['a claim without paths', { you: null, claims: [{ ...claim({ id: 'c1', peer: 'p2', paths: [] }), paths: undefined }] }],
    ['a claim with a numeric path', { you: null, claims: [claim({ id: 'c1', peer: 'p2', paths: [1 as unknown as string] })] }],
    ['a claim without its client', { you: null, claims: [{ ...claim({ id: 'c1', peer: 'p2', paths: ['a'] }), client: null }] }],
    ['a claim whose live is text', { you: null, claims: [{ ...claim({ id: 'c1', peer: 'p2', paths: ['a'] }), live: 'yes' }] }],
  ])('refuses %s', (_what, body) => {
    expect(claimsAnswerOf(body)).toBeNull();
  });
});

describe('judge', () => {
  const touched = ['src/b.ts', 'src/a/x.ts', 'docs/readme.md'];

  it('blocks on a live exclusive claim of another peer covering a touched path', () => {
    const judgement = judge({ you: 'p1', claims: [claim({ id: 'c1', peer: 'p2', paths: ['src/b.ts'] })] }, touched);
    expect(judgement.blocking).toEqual([{ claim: expect.objectContaining({ id: 'c1' }), paths: ['src/b.ts'] }]);
    expect(judgement.noted).toEqual([]);
  });

  it('never blocks on your own claims', () => {
    expect(judge({ you: 'p2', claims: [claim({ id: 'c1', peer: 'p2', paths: ['src/**'] })] }, touched)).toEqual({ blocking: [], noted: [] });
  });

  it('notes shared claims and claims whose peer is not attached, without blocking', () => {
    const judgement = judge(
      {
        you: null,
        claims: [claim({ id: 'c2', peer: 'p3', paths: ['docs'], exclusive: false }), claim({ id: 'c3', peer: 'p4', paths: ['src/a/**'], live: false })],
      },
      touched,
    );
    expect(judgement.blocking).toEqual([]);
    expect(judgement.noted.map((finding) => [finding.claim.id, finding.paths])).toEqual([
      ['c2', ['docs/readme.md']],
      ['c3', ['src/a/x.ts']],
    ]);
  });

  it('ignores claims that cover nothing touched, and orders findings by claim number', () => {
    const judgement = judge(
      {
        you: 'p1',
        claims: [
          claim({ id: 'c10', peer: 'p2', paths: ['src/**/*.ts'] }),
          claim({ id: 'c9', peer: 'p3', paths: ['lib/**'] }),
          claim({ id: 'c2', peer: 'p3', paths: ['src/b.ts'] }),
        ],
      },
      touched,
    );
    expect(judgement.blocking.map((finding) => [finding.claim.id, finding.paths])).toEqual([
      ['c2', ['src/b.ts']],
      ['c10', ['src/b.ts', 'src/a/x.ts']],
    ]);
  });
});

describe('report', () => {
  const blocking = judge({ you: 'p1', claims: [claim({ id: 'c1', peer: 'p2', paths: ['src/b.ts'], intent: 'say "hi"\nthen go' })] }, ['src/b.ts']);

  it('refuses naming the peer, client, quoted intent, claim and paths, and says how to go on', () => {
    const lines = report(blocking, { hook: 'pre-commit', setting: 'refuse', you: 'p1' });
    expect(lines[0]).toBe('majordomus git guard: this commit is refused: it touches paths another agent claimed exclusively.');
    expect(lines[1]).toBe('  p2 ("client-b") holds src/b.ts exclusively for "say \\"hi\\"\\nthen go" (claim c1); this commit touches src/b.ts');
    expect(lines[2]).toContain('To go on: talk to p2');
    expect(lines[2]).toContain('MAJORDOMUS_GUARD=warn');
    expect(lines[2]).toContain('MAJORDOMUS_GUARD=off');
    expect(lines).toHaveLength(3);
  });

  it('warns instead in warn mode, and speaks of a push for pre-push', () => {
    const lines = report(blocking, { hook: 'pre-push', setting: 'warn', you: 'p1' });
    expect(lines[0]).toBe('majordomus git guard: warning: this push touches paths another agent claimed exclusively; it goes on (MAJORDOMUS_GUARD=warn).');
    expect(lines[1]).toContain('this push touches src/b.ts');
    expect(lines.join('\n')).not.toContain('MAJORDOMUS_GUARD=off');
  });

  it('asks a committer the server did not recognise to name itself', () => {
    expect(report(blocking, { hook: 'pre-commit', setting: 'refuse', you: null }).join('\n')).toContain('set MAJORDOMUS_PEER to your peer id');
  });

  it('gives one note per non-blocking claim', () => {
    const noted = judge({ you: null, claims: [claim({ id: 'c4', peer: 'p3', paths: ['docs'], exclusive: false, intent: 'docs' })] }, ['docs/a.md']);
    expect(report(noted, { hook: 'pre-commit', setting: 'refuse', you: null })).toEqual([
      'majordomus git guard: note: p3 ("client-b") shares docs for "docs" (claim c4); this commit touches docs/a.md',
    ]);
  });

  it('says when an exclusive claim\'s agent is not attached', () => {
    const stale = judge({ you: null, claims: [claim({ id: 'c5', peer: 'p4', paths: ['src/**'], live: false })] }, ['src/x.ts']);
    expect(report(stale, { hook: 'pre-push', setting: 'refuse', you: null })).toEqual([
      'majordomus git guard: note: p4 ("client-b") held src/** exclusively (its agent is not attached now) for "refactor the parser" (claim c5); this push touches src/x.ts',
    ]);
  });

  it('quotes paths with control characters and lists at most ten per claim', () => {
    const paths = Array.from({ length: 12 }, (_, i) => `src/f${i}.ts`);
    const judgement = judge({ you: null, claims: [claim({ id: 'c1', peer: 'p2', paths: ['src/**', 'src/\u001b[31mred'] })] }, ['src/\u001b[31mred', ...paths]);
    const line = report(judgement, { hook: 'pre-commit', setting: 'refuse', you: null })[1] as string;
    expect(line).toContain('"src/\\u001b[31mred"');
    expect(line).not.toContain('\u001b');
    expect(line).toContain('and 3 more');
  });

  it('says nothing when nothing is covered', () => {
    expect(report({ blocking: [], noted: [] }, { hook: 'pre-commit', setting: 'refuse', you: null })).toEqual([]);
  });
});
