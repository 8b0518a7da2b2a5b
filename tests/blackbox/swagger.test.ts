/**
 * Swagger UI at /docs in a real browser (Debian's /usr/bin/chromium driven by playwright-core),
 * against `majordomus serve` on port 0 in a temporary git repository. Covers:
 * - the page renders an operation block for at least every HTTP capability route, and shows
 *   /api/v1/objects;
 * - every request the page makes (assets, the OpenAPI document) goes to 127.0.0.1:PORT: nothing
 *   leaves loopback, nothing comes from a CDN; every one of them succeeds;
 * - the page raises no error and logs no console error;
 * - it offers the lease's bearer scheme: trying the peer list out answers 401 until the person
 *   authorizes with the token, then 200, and the browser sent `Authorization: Bearer <token>`.
 * A missing /usr/bin/chromium fails the suite with a clear message (CI installs it): never a skip.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/serve.js';
import { serveFixture, type Served } from './http-fixture.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
const RENDER_TIMEOUT_MS = 45_000;

describe('Swagger UI at /docs', () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: the Swagger UI test needs Debian's chromium (apt-get install chromium)`);
    }
    served = await serveFixture();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 120_000);

  afterEach(async () => {
    await page?.close().catch(() => undefined);
    page = undefined;
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await served?.close();
  }, 60_000);

  it('renders every HTTP capability route from this server alone, with no page error', async () => {
    const server = (served as Served).server;
    const origin = `http://127.0.0.1:${server.port}`;
    const capabilities = (await rawRequest({ port: server.port, path: '/api/v1/capabilities' })).json<{
      capabilities: Array<{ exposure: { http?: unknown } }>;
    }>().capabilities;
    const httpRoutes = capabilities.filter((c) => c.exposure.http !== undefined).length;
    expect(httpRoutes).toBeGreaterThanOrEqual(10);

    page = await (browser as Browser).newPage();
    const requests: string[] = [];
    const failed: string[] = [];
    const badResponses: string[] = [];
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText ?? '?'}`));
    page.on('response', (response) => {
      if (response.status() >= 400) badResponses.push(`${response.status()} ${response.url()}`);
    });
    page.on('pageerror', (error) => pageErrors.push(error.stack ?? error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });

    const response = await page.goto(`${origin}/docs`, { waitUntil: 'load', timeout: RENDER_TIMEOUT_MS });
    expect(response?.status()).toBe(200);
    await page.waitForFunction(
      (minimum: number) => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document;
        return doc.querySelectorAll('.opblock').length >= minimum;
      },
      httpRoutes,
      { timeout: RENDER_TIMEOUT_MS, polling: 100 },
    );
    await page.getByText('/api/v1/objects', { exact: true }).first().waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(httpRoutes);
    expect(await page.locator('.opblock-summary-path').allInnerTexts()).toEqual(expect.arrayContaining(['/api/v1/objects', '/api/v1/peers/announce']));
    // Swagger UI shows what it cannot use in the document (e.g. an unsupported jsonSchemaDialect) in a
    // warning box; our document must raise none.
    expect(await page.locator('.errors-wrapper').allInnerTexts(), 'Swagger UI warnings about the document').toEqual([]);

    expect(requests.length).toBeGreaterThan(0);
    expect(requests).toContain(`${origin}/openapi.json`);
    const elsewhere = requests.filter((url) => new URL(url).origin !== origin && !url.startsWith('data:'));
    expect(elsewhere, 'requests that left 127.0.0.1:PORT').toEqual([]);
    expect(failed, 'failed requests').toEqual([]);
    expect(badResponses, 'responses with an error status').toEqual([]);
    expect(pageErrors, 'page errors').toEqual([]);
    expect(consoleErrors, 'console errors').toEqual([]);
  });

  it('offers the lease\'s bearer token: the peer list answers 401 until the person authorizes, then 200', async () => {
    const server = (served as Served).server;
    const origin = `http://127.0.0.1:${server.port}`;
    page = await (browser as Browser).newPage();
    const sent: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url() === `${origin}/api/v1/peers`) sent.push(request.headers().authorization);
    });
    await page.goto(`${origin}/docs`, { waitUntil: 'load', timeout: RENDER_TIMEOUT_MS });
    // The only GET whose path starts /api/v1/peers (the announcement is a POST).
    const operation = page.locator('.opblock.opblock-get').filter({ hasText: '/api/v1/peers' });
    await operation.waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('.try-out__btn').click();
    const status = operation.locator('.live-responses-table .response .response-col_status');
    const execute = async (): Promise<string> => {
      await operation.locator('.execute').click();
      await status.first().waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });
      return (await status.first().innerText()).trim();
    };
    expect(await execute()).toMatch(/^401/);

    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.dialog-ux');
    await dialog.locator('input').first().fill(server.token);
    await dialog.locator('.auth-btn-wrapper .authorize').click();
    await dialog.locator('.btn-done').click();
    await operation.locator('.btn-clear').click().catch(() => undefined);
    expect(await execute()).toMatch(/^200/);
    expect(sent).toEqual([undefined, `Bearer ${server.token}`]);
  });
});
