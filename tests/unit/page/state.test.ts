/** The live page's pure parts: conflicts among claims, transcript tail lines, Accept, the page's address and opener. */
import { describe, expect, it } from 'vitest';
import { openerFor, pageAddress, redirectPage } from '../../../src/cli/commands/open.js';
import { ClaimBoard } from '../../../src/coordination/claims.js';
import { graphicalDisplay } from '../../../src/platform/settings.js';
import { pagePolicy, prefersHtml } from '../../../src/page/assets.js';
import { conflictPairs, tailLine, PAGE_LIMITS } from '../../../src/page/state.js';

const CLIENT = { name: 'agent', version: '1' };
const ask = (paths: string[], exclusive = true) => ({ paths, intent: 'x', exclusive, ttl_seconds: 600, proceed: true });

describe('conflicts among claims', () => {
  it('pairs overlapping claims of different peers once each, lower claim first, and never a peer with itself', () => {
    const board = new ClaimBoard({ root: '/repo', isLive: () => true });
    board.claim('p1', CLIENT, ask(['src/a.ts']));
    board.claim('p2', CLIENT, ask(['src/**'], false));
    board.claim('p1', CLIENT, ask(['src/a.ts']));
    board.claim('p3', CLIENT, ask(['docs/x.md']));
    board.claim('p4', CLIENT, ask(['lib/*.md'], false));
    board.claim('p5', CLIENT, ask(['lib/*.ts'], false));
    expect(conflictPairs(board.overlapping())).toEqual([
      { claims: ['c1', 'c2'], peers: ['p1', 'p2'], paths: [{ a: 'src/a.ts', b: 'src/**' }], exclusive: true },
      { claims: ['c2', 'c3'], peers: ['p2', 'p1'], paths: [{ a: 'src/**', b: 'src/a.ts' }], exclusive: true },
    ]);
    expect(conflictPairs(new ClaimBoard({ root: '/repo', isLive: () => true }).overlapping())).toEqual([]);
  });
});

describe('a transcript line in the tail', () => {
  it('shows its time, kind and text, or the vendor event type, bounded', () => {
    expect(tailLine(JSON.stringify({ at: '2026-01-02T03:04:05.678Z', kind: 'assistant', text: 'hello\nworld', event: {} }))).toBe('03:04:05.678 assistant: hello world');
    expect(tailLine(JSON.stringify({ at: '2026-01-02T03:04:05.678Z', kind: 'other', event: { type: 'tick' } }))).toBe('03:04:05.678 other (tick)');
    expect(tailLine('not json')).toBe('not json');
    expect(tailLine(JSON.stringify({ kind: 'assistant', text: 'x'.repeat(1000) }))).toHaveLength(PAGE_LIMITS.tailLineChars + 1);
  });
});

describe('Accept', () => {
  it('prefers HTML for a browser only', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('TEXT/HTML')).toBe(true);
    for (const accept of ['', '*/*', 'application/json', 'application/json, text/html', 'text/html;q=0.2, application/json;q=0.5', 'text/html;q=0', 'text/html;q=abc']) {
      expect(prefersHtml(accept), accept).toBe(false);
    }
  });

  it('lets the page load this server\'s files and feed only, with no inline script', () => {
    const policy = pagePolicy('127.0.0.1:8741');
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain('connect-src \'self\' ws://127.0.0.1:8741');
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toContain('unsafe');
  });
});

describe('majordomus open', () => {
  it('puts the token in the fragment, encoded', () => {
    expect(pageAddress('http://127.0.0.1:8741', 'abc')).toBe('http://127.0.0.1:8741/#token=abc');
    expect(pageAddress('http://127.0.0.1:8741/', 'a b&c')).toBe('http://127.0.0.1:8741/#token=a%20b%26c');
  });

  it('opens with the platform\'s opener, on Linux only with a display', () => {
    expect(redirectPage('http://127.0.0.1:1/#token=a"><script>')).toContain('content="0;url=http://127.0.0.1:1/#token=a&#34;&#62;&#60;script&#62;"');
    expect(redirectPage('http://127.0.0.1:1/#token=abc')).not.toMatch(/<script/);
    expect(openerFor('darwin', graphicalDisplay({}))?.command).toBe('open');
    expect(openerFor('linux', graphicalDisplay({ DISPLAY: ':0' }))?.command).toBe('xdg-open');
    expect(openerFor('linux', graphicalDisplay({ WAYLAND_DISPLAY: 'wayland-0' }))?.command).toBe('xdg-open');
    expect(openerFor('linux', graphicalDisplay({}))).toBeNull();
  });
});
