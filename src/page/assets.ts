/**
 * The live page's files, read once when the HTTP thread starts from the package's `page/`
 * directory (hand-written HTML, CSS and one ES module: no build step, no CDN). The page's HTML is
 * answered with a Content-Security-Policy that allows this server's own files and its WebSocket
 * only: no inline script, nothing from elsewhere.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../platform/package-root.js';
import type { HttpReply } from '../platform/http-exchange.js';

export interface PageAssets {
  /** The page itself, for `GET /` from a browser. */
  page(host: string): HttpReply;
  /** `/page/app.js`, `/page/app.css`; undefined for anything else. */
  asset(path: string): HttpReply | undefined;
}

export const PAGE_DIR = join(PACKAGE_ROOT, 'page');

const FILES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

const COMMON_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
];

/** The policy of the page: this server's files and its feed; no inline code, no framing. */
export function pagePolicy(host: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self' ws://${host}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function loadPageAssets(dir: string = PAGE_DIR): PageAssets {
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const files = new Map<string, HttpReply>();
  for (const [file, contentType] of Object.entries(FILES)) {
    files.set(`/page/${file}`, { status: 200, contentType, headers: COMMON_HEADERS, body: readFileSync(join(dir, file)) });
  }
  return {
    page: (host) => ({
      status: 200,
      contentType: 'text/html; charset=utf-8',
      headers: [...COMMON_HEADERS, ['Content-Security-Policy', pagePolicy(host)], ['X-Frame-Options', 'DENY']],
      body: html,
    }),
    asset: (path) => files.get(path),
  };
}

/**
 * Whether a request's `Accept` prefers HTML to JSON: a browser's navigation (`text/html,…`) does;
 * a client naming no type, `*\/*`, or JSON at least as high as HTML gets the JSON answer.
 */
export function prefersHtml(accept: string): boolean {
  let html = 0;
  let json = 0;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(weight)) continue;
    if (type === 'text/html') html = Math.max(html, weight);
    if (type === 'application/json') json = Math.max(json, weight);
  }
  return html > 0 && html > json;
}
