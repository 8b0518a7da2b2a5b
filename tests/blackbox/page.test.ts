/**
 * The live page (`GET /` for a browser, its feed on the `/live` WebSocket) in a real browser —
 * Debian's /usr/bin/chromium driven by playwright-core — against the built executable in
 * temporary git repositories whose profiles run the fake agent CLI. Covers:
 * - the page renders the peers (two SDK clients, owner and bridge, with an announced intent),
 *   a conflict (two overlapping exclusive claims, the second with proceed), and the overseer
 *   posting from the page to one peer: the message reaches that SDK client as a notification and
 *   appears in the page's threads; the token from `majordomus open` leaves the address bar and
 *   stays in the tab's sessionStorage only;
 * - a running fake harness session whose transcript tail grows while the test watches, with no
 *   reload, and an executor task (run_task) with its state and token totals;
 * - the gateway's usage by provider and by key, with its cost and what it saved, growing as
 *   requests through the gateway are counted;
 * - every request stays on 127.0.0.1:PORT, no page error;
 * - keyboard only: Tab reaches every panel (and Shift-Tab goes back through them), the focus is
 *   visible; at 200 % zoom of a 640 px window (320 CSS px) nothing scrolls sideways;
 * - a takeover: the owner is SIGKILLed while a bridged client stays; the page says the server went
 *   away and how to find the new one, reconnects when the successor answers at the same address,
 *   asks for the new token (a new lease), and after it is given shows the survivor;
 * - bad input: `/live` with a bad token (an error frame, then closed), a malformed frame, an
 *   unknown frame and a binary frame (an error frame each, and the socket goes on serving), an
 *   oversized frame (closed), an upgrade from another Origin (403); `GET /` answers JSON unless
 *   the client prefers HTML; `/live` without an upgrade is refused; the page's files are GET only.
 * A missing /usr/bin/chromium fails the suite with a clear message (CI installs it): never a skip.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { request as httpRequest } from 'node:http';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { joinPeer, MESSAGE_METHOD, waitForNotice } from '../helpers/coordination.js';
import { answer, harnessFiles } from '../helpers/harness.js';
import { rawRequest, startServe, type ServeProcess } from '../helpers/serve.js';
import { ATTACHED, peersVia, Scene, SHARED_LAYER, waitForLease, waitForLog } from '../helpers/shared.js';
import { startModelApi } from '../helpers/model-api.js';
import { isAlive, waitFor } from '../helpers/wait.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

/** A peer's intent that would run a script if the page ever parsed it as HTML. */
const MARKUP = '<img src=x onerror="window.pwned=true">';// What the functions run in the page (page.evaluate) use of the browser's globals; declared here,
// in this module only, instead of bringing the DOM library into every file's type-check.
interface PageElement {
  id: string;
  tagName: string;
  labels?: { length: number } | null;
  closest(selector: string): PageElement | null;
}
declare const document: {
  activeElement: PageElement | null;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare const sessionStorage: { getItem(key: string): string | null };
declare const localStorage: { length: number };
declare function getComputedStyle(element: PageElement): { outlineStyle: string };

/** Bounds for a loaded two-core machine. */
const SEEN_MS = 30_000;
const PANELS = ['server', 'peers', 'claims', 'messages', 'sessions', 'tasks', 'usage'];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function openAddress(root: string): Promise<string> {
  const run = await runCli(['open', '--print'], { cwd: root });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.trim();
}

/** What a page did that it should not: errors, requests off this server, failed requests. */
function watch(page: Page, origin: string): { problems: string[]; navigations: () => number } {
  const problems: string[] = [];
  let navigations = 0;
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith(origin.replace('http://', 'ws://'))) problems.push(`request off this server: ${url}`);
  });
  // A load of the document (history.replaceState, which drops the token, is not one).
  page.on('request', (request) => {
    if (request.resourceType() === 'document' && request.frame() === page.mainFrame()) navigations += 1;
  });
  return { problems, navigations: () => navigations };
}

describe('the live page', () => {
  const scene = new Scene();
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the live page test needs Debian's chromium (apt-get install chromium)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 120_000);

  afterEach(async () => {
    await context?.close().catch(() => undefined);
    context = undefined;
    await scene.cleanup();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
  }, 60_000);

  async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    context = await (browser as Browser).newContext({ viewport });
    return context.newPage();
  }

  it('shows the peers, a conflict, and the overseer\'s message reaching a peer as a notification', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const alpha = await joinPeer(scene, repo.root, 'alpha');
    await waitForLease(repo.root);
    const beta = await joinPeer(scene, repo.root, 'beta');
    await answer(alpha.client, 'announce', { intent: `refactoring the answer ${MARKUP}`, paths: ['src/index.ts'] });
    await answer(alpha.client, 'claim', { paths: ['src/index.ts'], intent: 'change the answer', exclusive: true });
    await answer(beta.client, 'claim', { paths: ['src/'], intent: 'rename the sources', exclusive: true, proceed: true });

    const address = await openAddress(repo.root);
    const origin = new URL(address).origin;
    const token = decodeURIComponent(new URL(address).hash.slice('#token='.length));
    const page = await newPage();
    const seen = watch(page, origin);
    await page.goto(address, { waitUntil: 'load' });

    // The token left the address bar and lives in this tab only.
    await waitFor(() => (page.url() === `${origin}/` ? true : null), { what: 'the token to leave the address bar', timeoutMs: SEEN_MS });
    expect(await page.evaluate(() => sessionStorage.getItem('majordomus.token'))).toBe(token);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    const peers = page.locator('#peer-list');
    await peers.locator(`[data-peer="${alpha.id}"]`).waitFor({ timeout: SEEN_MS });
    await peers.locator(`[data-peer="${beta.id}"]`).waitFor({ timeout: SEEN_MS });
    await expect.poll(() => peers.locator(`[data-peer="${alpha.id}"]`).textContent(), { timeout: SEEN_MS }).toContain('refactoring the answer');
    expect(await peers.locator(`[data-peer="${beta.id}"]`).textContent()).toContain('beta');
    // What a peer wrote is text on the page, never markup: no element made, no script run.
    expect(await peers.locator(`[data-peer="${alpha.id}"]`).textContent()).toContain(MARKUP);
    expect(await page.locator('#peer-list img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: boolean }).pwned)).toBeUndefined();

    const conflict = page.locator('#conflict-list li.conflict');
    await conflict.first().waitFor({ timeout: SEEN_MS });
    const conflictText = (await conflict.first().textContent()) ?? '';
    expect(conflictText).toContain('exclusive conflict');
    expect(conflictText).toContain(alpha.id);
    expect(conflictText).toContain(beta.id);
    expect(await page.locator('#claim-list li.conflict').count()).toBe(2);
    expect(await page.locator('#connection').textContent()).toContain('Live');

    // The person writes to beta alone, as the overseer.
    await page.selectOption('#post-to', beta.id);
    await page.fill('#post-body', 'Please hold off src/ until alpha is done.');
    await page.click('#post-form button[type="submit"]');
    const notice = await waitForNotice(beta, MESSAGE_METHOD, (params: { message?: { body?: string } }) => params.message?.body === 'Please hold off src/ until alpha is done.');
    expect(notice.message).toMatchObject({ from: 'overseer', to: [beta.id] });
    await expect.poll(() => page.locator('#post-result').textContent(), { timeout: SEEN_MS }).toContain(`told ${beta.id}`);
    await expect.poll(() => page.locator('#thread-list').textContent(), { timeout: SEEN_MS }).toContain('Please hold off src/');
    expect(alpha.notices.filter((n) => n.method === MESSAGE_METHOD), 'alpha was not addressed').toEqual([]);

    // A peer writes to the overseer: the page's inbox shows it.
    await answer(beta.client, 'send_message', { to: ['overseer'], body: 'Understood, waiting.' });
    await expect.poll(() => page.locator('#inbox-list').textContent(), { timeout: SEEN_MS }).toContain('Understood, waiting.');

    // A broken edit of the layer: the server panel shows the next generation and its diagnostic.
    await writeFile(join(repo.root, '.ai/repo/rules/testing.md'), '---\ntitle: [unclosed\n---\n# Test behaviour\n');
    await expect.poll(() => page.locator('#diagnostics').textContent(), { timeout: SEEN_MS }).toContain('malformed_yaml');
    expect(await page.locator('#diagnostics').textContent()).toContain('.ai/repo/rules/testing.md');
    expect(await page.locator('#server-facts').textContent()).toMatch(/Layer generation\s*2/);
    await scene.rebaselineAll(); // the edit above is the test's own

    expect(seen.navigations(), 'the page was never reloaded').toBe(1);
    expect(seen.problems).toEqual([]);
  }, 180_000);

  it('shows a running session whose transcript tail grows without a reload, and an executor task with its tokens', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude' }, 'fake-executor': { agent: 'executor' } } }) });
    const owner = await joinPeer(scene, repo.root, 'owner');
    await waitForLease(repo.root);
    const address = await openAddress(repo.root);
    const page = await newPage();
    const seen = watch(page, new URL(address).origin);
    await page.goto(address, { waitUntil: 'load' });
    await page.locator('#connection.live').waitFor({ timeout: SEEN_MS });

    const spawned = await answer<{ session: string }>(owner.client, 'spawn', { profile: 'worker', prompt: 'lines:200:100 answer:ticked' });
    const session = page.locator(`[data-session="${spawned.session}"]`);
    await session.waitFor({ timeout: SEEN_MS });
    await expect.poll(() => session.locator('.status-running').count(), { timeout: SEEN_MS }).toBe(1);
    // The tail grows while we watch: new tick lines replace the ones shown.
    const ticks = async (): Promise<string[]> => (await session.locator('.tail li').allTextContents()).filter((line) => line.includes('tick'));
    const first = await waitFor(async () => ((await ticks()).length > 0 ? await ticks() : null), { what: 'a tick in the tail', timeoutMs: SEEN_MS });
    const later = await waitFor(
      async () => {
        const now = await ticks();
        return now.length > 0 && now.at(-1) !== first.at(-1) ? now : null;
      },
      { what: 'the tail to grow', timeoutMs: SEEN_MS },
    );
    expect(later.at(-1)).not.toBe(first.at(-1));
    await answer(owner.client, 'session_kill', { session: spawned.session });
    await expect.poll(() => session.locator('.status-killed').count(), { timeout: SEEN_MS }).toBe(1);

    const started = await owner.client.callTool({ name: 'run_task', arguments: { task: 'answer:all done', profile: 'fake-executor', wait: true, timeout_seconds: 60 } }, undefined, { timeout: 90_000 });
    const state = started.structuredContent as { task_id: string; status: string; turns: number; token_totals: { prompt_tokens: number; completion_tokens: number } };
    expect(state.status).toBe('completed');
    expect(state.token_totals.prompt_tokens, 'the fake executor reports its usage').toBeGreaterThan(0);
    const row = page.locator(`#task-rows [data-task="${state.task_id}"]`);
    await row.waitFor({ timeout: SEEN_MS });
    // The page shows what check_task answers: its state and token totals.
    await expect
      .poll(async () => (await row.locator('td').allTextContents()).slice(0, 4), { timeout: SEEN_MS })
      .toEqual([state.status, String(state.turns), String(state.token_totals.prompt_tokens), String(state.token_totals.completion_tokens)]);

    expect(seen.navigations()).toBe(1);
    expect(seen.problems).toEqual([]);
  }, 180_000);

  it('shows the gateway\'s usage by provider and by key, with its cost, as requests are counted', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const server: ServeProcess = await startServe({ cwd: repo.root, env: { MAJORDOMUS_TEST_FRIEND_KEY: 'friend-key-0123456789' } });
    scene.defer(() => server.stop().then(() => undefined));
    const api = await startModelApi({ replies: [{ kind: 'text', text: 'one', usage: { inputTokens: 1000, outputTokens: 100 } }, { kind: 'text', text: 'two', usage: { inputTokens: 1000, outputTokens: 100 } }] });
    scene.defer(() => api.stop());
    await writeFile(
      join(repo.root, '.ai/local/executor.yaml'),
      [
        `providers: {cheap: {base_url: ${api.url}/v1, models: [m1]}}`,
        'gateway: {keys: [{name: friend, key_env: MAJORDOMUS_TEST_FRIEND_KEY, models: [m1]}]}',
        'prices: {currency: USD, models: {m1: {input_per_million: 2, output_per_million: 10}}, reference: {name: the orchestrator, input_per_million: 3, output_per_million: 15}}',
        '',
      ].join('\n'),
    );
    const page = await newPage();
    const seen = watch(page, server.url);
    await page.goto(`${server.url}/#token=${server.token}`, { waitUntil: 'load' });
    await page.locator('#connection.live').waitFor({ timeout: SEEN_MS });
    await expect.poll(() => page.locator('#usage-provider-rows').textContent(), { timeout: SEEN_MS }).toContain('nothing yet');
    const chat = (key: string): Promise<Response> =>
      fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }] }) });
    expect((await chat(server.token)).status).toBe(200);
    expect((await chat('friend-key-0123456789')).status).toBe(200);
    // 1000 in at 2 and 100 out at 10 per million: 0.003 each; the reference would have cost 0.0045.
    const cells = (selector: string) => page.locator(selector).locator('td').allTextContents();
    await expect.poll(() => cells('#usage-provider-rows [data-usage="cheap"]'), { timeout: SEEN_MS }).toEqual(['2', '0', '2000', '200', '0.006 USD', '0.003 USD']);
    await expect.poll(() => cells('#usage-key-rows [data-usage="friend"]'), { timeout: SEEN_MS }).toEqual(['1', '0', '1000', '100', '0.003 USD', '0.0015 USD']);
    expect(await cells('#usage-key-rows [data-usage="lease"]')).toEqual(['1', '0', '1000', '100', '0.003 USD', '0.0015 USD']);
    expect(await page.locator('#usage-summary').textContent()).toBe('(2 requests, 0.006 USD, saved 0.003 USD)');
    expect(await page.locator('#usage-note').textContent()).toContain('Saved is measured against the orchestrator.');
    expect(seen.problems).toEqual([]);
  }, 180_000);

  it('reaches every panel by keyboard alone, shows the focus, and does not scroll sideways at 200 % zoom', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const server: ServeProcess = await startServe({ cwd: repo.root });
    scene.defer(() => server.stop().then(() => undefined));
    // A 640 px wide window at 200 %: 320 CSS pixels.
    const page = await newPage({ width: 320, height: 640 });
    await page.goto(`${server.url}/#token=${server.token}`, { waitUntil: 'load' });
    await page.locator('#connection.live').waitFor({ timeout: SEEN_MS });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'no horizontal scroll').toBeLessThanOrEqual(0);

    const where = (): Promise<{ panel: string | null; outline: string; tag: string }> =>
      page.evaluate(() => {
        const active = document.activeElement;
        return {
          panel: active?.closest('section.panel')?.id ?? null,
          outline: active ? getComputedStyle(active).outlineStyle : 'none',
          tag: active?.tagName ?? '',
        };
      });
    const forward: string[] = [];
    for (let i = 0; i < 60 && forward.length < PANELS.length; i += 1) {
      await page.keyboard.press('Tab');
      const at = await where();
      if (at.panel !== null && !forward.includes(at.panel)) {
        forward.push(at.panel);
        expect(at.outline, `the focus is visible in ${at.panel} (${at.tag})`).not.toBe('none');
      }
    }
    expect(forward).toEqual(PANELS);
    // On past the last panel (to the footer's links), then back through every panel.
    for (let i = 0; i < 20 && !(await page.evaluate(() => (document.activeElement?.closest('footer') ?? null) !== null)); i += 1) {
      await page.keyboard.press('Tab');
    }
    const backward: string[] = [];
    for (let i = 0; i < 60 && backward.length < PANELS.length; i += 1) {
      await page.keyboard.press('Shift+Tab');
      const at = await where();
      if (at.panel !== null && !backward.includes(at.panel)) backward.push(at.panel);
    }
    expect(backward).toEqual([...PANELS].reverse());
    // Every control is labelled.
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')].filter((c) => !c.labels || c.labels.length === 0).map((c) => c.id),
    );
    expect(unlabelled).toEqual([]);
    // A skip link and the panel links lead to the panels.
    expect(await page.locator('a.skip').getAttribute('href')).toBe('#main');
    expect(await page.locator('nav a[href="/docs"]').count()).toBe(1);
  }, 120_000);

  it('says the server went away when its owner is killed, reconnects to the successor at the same address and asks for its token', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const port = await freePort();
    const args = ['--http-port', String(port)];
    const owner = await scene.client(repo.root, { name: 'owner', args });
    const before = await waitForLease(repo.root);
    expect(before.url).toBe(`http://127.0.0.1:${port}`);
    const bridge = await scene.client(repo.root, { name: 'bridged', args });
    await waitForLog(bridge.stderr, ATTACHED);
    const page = await newPage();
    await page.goto(`${before.url}/#token=${before.token}`, { waitUntil: 'load' });
    await page.locator('#peer-list [data-peer="p2"]').waitFor({ timeout: SEEN_MS });

    process.kill(owner.pid, 'SIGKILL');
    await waitFor(() => !isAlive(owner.pid), { what: 'the owner to die', timeoutMs: 20_000 });
    const lost = page.locator('#lost');
    await lost.waitFor({ state: 'visible', timeout: SEEN_MS });
    expect(await lost.textContent()).toContain('majordomus open');
    expect(await page.locator('#connection').textContent()).toContain('went away');

    // The bridge's next call elects it; it binds the same address with a new lease and token.
    expect((await peersVia(bridge.client)).you).toBe('p2');
    const after = await waitForLease(repo.root, (doc) => doc.token !== before.token);
    expect(after.url).toBe(before.url);
    // The page reconnects by itself; the old token is refused, so it asks for the new one.
    const tokenPanel = page.locator('#token-panel');
    await tokenPanel.waitFor({ state: 'visible', timeout: SEEN_MS });
    expect(await page.locator('#token-why').textContent()).toContain('new server');
    expect(await page.evaluate(() => sessionStorage.getItem('majordomus.token'))).toBeNull();
    await page.fill('#token-input', after.token);
    await page.keyboard.press('Enter');
    await page.locator('#connection.live').waitFor({ timeout: SEEN_MS });
    await expect.poll(() => lost.isVisible(), { timeout: SEEN_MS }).toBe(false);
    await page.locator('#peer-list [data-peer="p2"]').waitFor({ timeout: SEEN_MS });
    expect(await page.locator('#server-facts').textContent()).toContain(String(after.pid));
  }, 180_000);

  it('refuses bad input on /live and keeps serving, and answers GET / by Accept', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const server: ServeProcess = await startServe({ cwd: repo.root });
    scene.defer(() => server.stop().then(() => undefined));
    const page = await newPage();
    // A page of this origin without the live page's script.
    await page.goto(`${server.url}/openapi.json`, { waitUntil: 'load' });

    const exchange = (frames: Array<string | number[] | { bytes: number }>, wait: 'close' | number) =>
      page.evaluate(
        ({ url, frames, wait }) =>
          new Promise<{ received: Array<{ type: string; code?: string }>; closed: number | null }>((resolve) => {
            const ws = new WebSocket(url);
            const received: Array<{ type: string; code?: string }> = [];
            let closed: number | null = null;
            const done = (): void => resolve({ received, closed });
            ws.onopen = () => {
              for (const frame of frames) {
                if (typeof frame === 'string') ws.send(frame);
                else if (Array.isArray(frame)) ws.send(new Uint8Array(frame));
                else ws.send('x'.repeat(frame.bytes));
              }
            };
            ws.onmessage = (event) => {
              received.push(JSON.parse(event.data as string));
              if (typeof wait === 'number' && received.length >= wait) {
                ws.close();
                done();
              }
            };
            ws.onclose = (event) => {
              closed = event.code;
              done();
            };
          }),
        { url: `ws://127.0.0.1:${server.port}/live`, frames, wait },
      );

    const wrong = await exchange([JSON.stringify({ type: 'hello', token: 'not-the-token' })], 'close');
    expect(wrong.received).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized' })]);
    expect(wrong.closed).toBe(1008);
    const missing = await exchange([JSON.stringify({ type: 'hello' })], 'close');
    expect(missing.received).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized' })]);

    const hello = JSON.stringify({ type: 'hello', token: server.token });
    const bad = await exchange(['{not json', '[1,2]', JSON.stringify({ type: 'subscribe' }), [1, 2, 3], hello], 5);
    expect(bad.received.map((f) => f.code ?? f.type)).toEqual(['invalid_json', 'invalid_message', 'invalid_message', 'binary_frame', 'state']);
    expect(bad.closed).toBeNull();

    const oversized = await exchange([{ bytes: 64 * 1024 }], 'close');
    expect(oversized.received).toEqual([]);
    expect(oversized.closed).not.toBeNull();
    // The server goes on serving pages.
    const again = await exchange([hello], 1);
    expect(again.received[0]?.type).toBe('state');

    // An upgrade from a page elsewhere is refused before it opens.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: server.port,
        path: '/live',
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          Origin: 'http://evil.example',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve(101);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);

    // GET / by Accept: the page for a browser, JSON for everyone else.
    const html = await rawRequest({ port: server.port, path: '/', headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.headers['cache-control']).toBe('no-store');
    expect(html.headers['content-security-policy']).toContain("script-src 'self'");
    expect(html.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(html.text).toContain('<script type="module" src="/page/app.js"></script>');
    expect(html.text).not.toMatch(/<script>(?!<\/script>)/);
    for (const accept of ['', '*/*', 'application/json', 'application/json, text/html', 'text/html;q=0.5, application/json']) {
      const json = await rawRequest({ port: server.port, path: '/', headers: accept === '' ? {} : { Accept: accept } });
      expect(json.headers['content-type'], `Accept: ${accept}`).toBe('application/json');
      expect(json.json()).toMatchObject({ name: 'majordomus', leaseholder: true });
    }
    const script = await rawRequest({ port: server.port, path: '/page/app.js' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const post = await rawRequest({ port: server.port, method: 'POST', path: '/page/app.js' });
    expect(post.status).toBe(405);
    const plain = await rawRequest({ port: server.port, path: '/live' });
    expect(plain.status).toBe(406);
    expect(plain.json()).toMatchObject({ error: { code: 'not_acceptable' } });
    expect((await rawRequest({ port: server.port, path: '/page/nothing.js' })).status).toBe(404);
  }, 120_000);
});
